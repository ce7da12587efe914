// Shape: device globals whose alphabetical order (dev_a < dev_z) differs
// from the --device order (dev_z first); everything annotated, the argument
// and result on @dev_z, the work on @dev_a.
// devices: dev_z dev_a
// call: z_then_a
// inputs: 6xf32
func.func public @z_then_a(
    %x: tensor<6xf32> {iree.abi.affinity = #hal.device.promise<@dev_z>}
  ) -> (tensor<6xf32> {iree.abi.affinity = #hal.device.promise<@dev_z>}) {
  %xa = flow.tensor.transfer %x : tensor<6xf32> to #hal.device.promise<@dev_a>
  %e = math.absf %xa : tensor<6xf32>
  %s = arith.addf %e, %xa : tensor<6xf32>
  %back = flow.tensor.transfer %s : tensor<6xf32> to #hal.device.promise<@dev_z>
  return %back : tensor<6xf32>
}
