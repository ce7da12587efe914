// A program with state of its own: each call of @accumulate adds its input to a running
// sum kept in a mutable global on device_b and returns the sum so far.
util.global private mutable @sum = dense<0.0> : tensor<8xf32>

func.func public @accumulate(%x: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %x_b = flow.tensor.transfer %x : tensor<8xf32> to #hal.device.promise<@device_b>
  %s = util.global.load @sum : tensor<8xf32>
  %s_b = flow.tensor.transfer %s : tensor<8xf32> to #hal.device.promise<@device_b>
  %n = arith.addf %s_b, %x_b : tensor<8xf32>
  util.global.store %n, @sum : tensor<8xf32>
  %back = flow.tensor.transfer %n : tensor<8xf32> to #hal.device.promise<@device_a>
  return %back : tensor<8xf32>
}

// No state at all, beside the stateful ones: its calls may be pipelined.
func.func public @doubled(%x: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %x_b = flow.tensor.transfer %x : tensor<8xf32> to #hal.device.promise<@device_b>
  %d = arith.addf %x_b, %x_b : tensor<8xf32>
  %back = flow.tensor.transfer %d : tensor<8xf32> to #hal.device.promise<@device_a>
  return %back : tensor<8xf32>
}
