// A f32 tensor goes device_a -> device_b, is combined with itself there, and comes back.
func.func public @roundtrip(
    %x: tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %on_b = flow.tensor.transfer %x : tensor<2x3xf32> to #hal.device.promise<@device_b>
  %r = arith.addf %on_b, %on_b : tensor<2x3xf32>
  %back = flow.tensor.transfer %r : tensor<2x3xf32> to #hal.device.promise<@device_a>
  return %back : tensor<2x3xf32>
}
