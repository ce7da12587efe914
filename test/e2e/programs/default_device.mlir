// Arguments and results declared on no device: the caller places them on
// the module's default device, IREE's (the device whose name sorts first,
// device_a, whatever the --device order). @moved moves %x to device_b,
// computes there and moves the result to device_a; @plain computes on the
// default device alone. Compiled with device_a on a GPU (the default on the
// GPU), or device_b (the default on the CPU).
func.func public @moved(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %y = arith.mulf %b, %b : tensor<4xf32>
  %r = flow.tensor.transfer %y : tensor<4xf32> to #hal.device.promise<@device_a>
  return %r : tensor<4xf32>
}

func.func public @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
