// State of the program's own used on two devices with memories of their own:
// @accumulate adds its input to a sum kept in a mutable global, computing and
// storing it on device_b, and returns the sum before (on device_a) and after
// (on device_b); @current returns the sum on device_a; @accumulate_twice is
// two calls of @accumulate in one, for runners that make one call a process.
util.global private mutable @sum = dense<0.0> : tensor<4xf32>

func.func public @accumulate(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %s = util.global.load @sum : tensor<4xf32>
  %s_b = flow.tensor.transfer %s : tensor<4xf32> to #hal.device.promise<@device_b>
  %x_b = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %n = arith.addf %s_b, %x_b : tensor<4xf32>
  util.global.store %n, @sum : tensor<4xf32>
  return %s, %n : tensor<4xf32>, tensor<4xf32>
}

func.func public @current() -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %s = util.global.load @sum : tensor<4xf32>
  return %s : tensor<4xf32>
}

func.func public @accumulate_twice(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %before1, %after1 = func.call @accumulate(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %before2, %after2 = func.call @accumulate(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %now = func.call @current() : () -> tensor<4xf32>
  return %now : tensor<4xf32>
}
