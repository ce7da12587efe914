// Shape: a coarse-fences async function with nothing annotated; transfers
// move the argument to @dev_b and the result back.
// devices: dev_a dev_b
// call: fenced_plain
// inputs: 3x3xi32
func.func public @fenced_plain(%x: tensor<3x3xi32>) -> tensor<3x3xi32>
    attributes {iree.abi.model = "coarse-fences"} {
  %xb = flow.tensor.transfer %x : tensor<3x3xi32> to #hal.device.promise<@dev_b>
  %sq = arith.muli %xb, %xb : tensor<3x3xi32>
  %back = flow.tensor.transfer %sq : tensor<3x3xi32> to #hal.device.promise<@dev_a>
  %r = arith.addi %back, %x : tensor<3x3xi32>
  return %r : tensor<3x3xi32>
}
