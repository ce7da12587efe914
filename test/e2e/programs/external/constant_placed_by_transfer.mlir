// Shape: a constant with no device of its own, placed only by the
// flow.tensor.transfer of its consumer on @dev_b.
// devices: dev_a dev_b
// call: scale_on_b
// inputs: 4xi32
func.func public @scale_on_b(
    %x: tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@dev_a>}
  ) -> (tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@dev_a>}) {
  %k = arith.constant dense<[3, -1, 4, 10]> : tensor<4xi32>
  %kb = flow.tensor.transfer %k : tensor<4xi32> to #hal.device.promise<@dev_b>
  %xb = flow.tensor.transfer %x : tensor<4xi32> to #hal.device.promise<@dev_b>
  %m = arith.muli %xb, %kb : tensor<4xi32>
  %ma = flow.tensor.transfer %m : tensor<4xi32> to #hal.device.promise<@dev_a>
  return %ma : tensor<4xi32>
}
