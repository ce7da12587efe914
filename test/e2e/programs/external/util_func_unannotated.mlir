// Shape: a util.func public with no iree.abi.affinity anywhere; transfers
// alone move the argument to @dev_b and the product back to @dev_a.
// devices: dev_a dev_b
// call: util_plain
// inputs: 2x3xi32
util.func public @util_plain(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %xb = flow.tensor.transfer %x : tensor<2x3xi32> to #hal.device.promise<@dev_b>
  %sq = arith.muli %xb, %xb : tensor<2x3xi32>
  %back = flow.tensor.transfer %sq : tensor<2x3xi32> to #hal.device.promise<@dev_a>
  %r = arith.subi %back, %x : tensor<2x3xi32>
  util.return %r : tensor<2x3xi32>
}
