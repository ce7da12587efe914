// A global initialised on device_a, read on device_b inside a called function.
util.global private @bias = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>

func.func private @scale_on_b(%v: tensor<4xf32>) -> tensor<4xf32> {
  %on_b = flow.tensor.transfer %v : tensor<4xf32> to #hal.device.promise<@device_b>
  %b = util.global.load @bias : tensor<4xf32>
  %b_on_b = flow.tensor.transfer %b : tensor<4xf32> to #hal.device.promise<@device_b>
  %r = arith.mulf %on_b, %b_on_b : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func public @apply(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = call @scale_on_b(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %back = flow.tensor.transfer %y : tensor<4xf32> to #hal.device.promise<@device_a>
  %z = arith.addf %back, %x : tensor<4xf32>
  return %z : tensor<4xf32>
}
