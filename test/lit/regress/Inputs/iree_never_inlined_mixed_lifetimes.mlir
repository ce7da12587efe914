// Stock IREE 3.13.0: one never-inlined function called with an imported
// argument (external) and with a computed value (transient).
util.func private @g(%x: tensor<2x4xi32>) -> tensor<2x4xi32> attributes {inlining_policy = #util.inline.never} {
  %y = arith.addi %x, %x : tensor<2x4xi32>
  util.return %y : tensor<2x4xi32>
}
util.func public @direct(%x: tensor<2x4xi32>) -> tensor<2x4xi32> {
  %d = util.call @g(%x) : (tensor<2x4xi32>) -> tensor<2x4xi32>
  util.return %d : tensor<2x4xi32>
}
util.func public @computed(%x: tensor<2x4xi32>) -> tensor<2x4xi32> {
  %c = arith.muli %x, %x : tensor<2x4xi32>
  %d = util.call @g(%c) : (tensor<2x4xi32>) -> tensor<2x4xi32>
  util.return %d : tensor<2x4xi32>
}
