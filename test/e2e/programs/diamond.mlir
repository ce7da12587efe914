// A diamond: one input, two branches on two devices, joined on device_a.
func.func public @diamond(
    %x: tensor<16x8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<16x8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %left = arith.mulf %x, %x : tensor<16x8xf32>
  %x_on_b = flow.tensor.transfer %x : tensor<16x8xf32> to #hal.device.promise<@device_b>
  %right_b = arith.addf %x_on_b, %x_on_b : tensor<16x8xf32>
  %right = flow.tensor.transfer %right_b : tensor<16x8xf32> to #hal.device.promise<@device_a>
  %joined = arith.subf %left, %right : tensor<16x8xf32>
  return %joined : tensor<16x8xf32>
}
