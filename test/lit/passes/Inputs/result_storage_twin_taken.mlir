// The program already defines @back$into, the name of @back's twin.
util.func public @back(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_a>
  util.return %y : tensor<4xf32>
}
util.func public @back$into(%x: tensor<4xf32>) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
