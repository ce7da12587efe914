// Argument and result both on device_b (the GPU); the CPU squares in between.
func.func public @gpu_roundtrip(
    %x: tensor<64xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}
  ) -> (tensor<64xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %on_a = flow.tensor.transfer %x : tensor<64xf32> to #hal.device.promise<@device_a>
  %sq = arith.mulf %on_a, %on_a : tensor<64xf32>
  %back = flow.tensor.transfer %sq : tensor<64xf32> to #hal.device.promise<@device_b>
  %r = arith.addf %back, %x : tensor<64xf32>
  return %r : tensor<64xf32>
}
