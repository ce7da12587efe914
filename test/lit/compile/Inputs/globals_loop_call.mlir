// A mutable global updated in a loop through a called function, on device_a,
// with one hop to device_b and back.
util.global private mutable @counter = dense<0.0> : tensor<4xf32>

func.func private @bump(%v: tensor<4xf32>, %by: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %v, %by : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func public @accumulate(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %n: index
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = util.global.load @counter : tensor<4xf32>
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<4xf32> {
    %next = func.call @bump(%acc, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  util.global.store %sum, @counter : tensor<4xf32>
  %on_b = flow.tensor.transfer %sum : tensor<4xf32> to #hal.device.promise<@device_b>
  %doubled = arith.addf %on_b, %on_b : tensor<4xf32>
  %back = flow.tensor.transfer %doubled : tensor<4xf32> to #hal.device.promise<@device_a>
  return %back : tensor<4xf32>
}
