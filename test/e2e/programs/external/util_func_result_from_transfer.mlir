// Shape: a util.func public, nothing annotated, whose only result is the
// transfer to @dev_b of a value computed on the default device.
// devices: dev_a dev_b
// call: util_moved_result
// inputs: 2x2xf32
util.func public @util_moved_result(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %sq = arith.mulf %x, %x : tensor<2x2xf32>
  %r = flow.tensor.transfer %sq : tensor<2x2xf32> to #hal.device.promise<@dev_b>
  util.return %r : tensor<2x2xf32>
}
