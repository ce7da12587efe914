// Shape: the --device order (dev_z first) differs from the alphabetical one
// (dev_a first, IREE 3.13's default device), and nothing is annotated: the
// argument and result land on whichever device is the default; transfers
// move the work to @dev_a and back to @dev_z.
// devices: dev_z dev_a
// call: z_a_plain
// inputs: 4xi32
func.func public @z_a_plain(%x: tensor<4xi32>) -> tensor<4xi32> {
  %xa = flow.tensor.transfer %x : tensor<4xi32> to #hal.device.promise<@dev_a>
  %d = arith.muli %xa, %xa : tensor<4xi32>
  %back = flow.tensor.transfer %d : tensor<4xi32> to #hal.device.promise<@dev_z>
  %r = arith.addi %back, %x : tensor<4xi32>
  return %r : tensor<4xi32>
}
