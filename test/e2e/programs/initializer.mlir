// A global computed at load time on device_a and kept on device_b.
util.global private @table : tensor<8xf32>
util.initializer {
  %seed = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %x = flow.tensor.transfer %seed : tensor<8xf32> to #hal.device.promise<@device_a>
  %sq = arith.mulf %x, %x : tensor<8xf32>
  %on_b = flow.tensor.transfer %sq : tensor<8xf32> to #hal.device.promise<@device_b>
  util.global.store %on_b, @table : tensor<8xf32>
  util.return
}

func.func public @lookup(
    %x: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %x_b = flow.tensor.transfer %x : tensor<8xf32> to #hal.device.promise<@device_b>
  %t = util.global.load @table : tensor<8xf32>
  %sum = arith.addf %x_b, %t : tensor<8xf32>
  %back = flow.tensor.transfer %sum : tensor<8xf32> to #hal.device.promise<@device_a>
  return %back : tensor<8xf32>
}
