// Not a test: an input of host_entry_points.mlir.
util.func public @f(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
util.func public @f$host(%x: tensor<4xf32>) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
