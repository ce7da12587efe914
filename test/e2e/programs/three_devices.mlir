// local -> discrete -> second local -> back: device_a and device_c share memory,
// device_b is staged from both.
func.func public @three_devices(
    %x: tensor<4x4xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<4x4xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %on_b = flow.tensor.transfer %x : tensor<4x4xi32> to #hal.device.promise<@device_b>
  %sq = arith.muli %on_b, %on_b : tensor<4x4xi32>
  %on_c = flow.tensor.transfer %sq : tensor<4x4xi32> to #hal.device.promise<@device_c>
  %plus = arith.addi %on_c, %on_c : tensor<4x4xi32>
  %back = flow.tensor.transfer %plus : tensor<4x4xi32> to #hal.device.promise<@device_a>
  %r = arith.subi %back, %x : tensor<4x4xi32>
  return %r : tensor<4x4xi32>
}
