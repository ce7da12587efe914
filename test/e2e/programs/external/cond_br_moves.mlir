// Shape: cf.cond_br with nothing annotated: one successor moves the value
// to @dev_b and hands back a transfer of the result, the other computes on
// the default device; both meet in one block argument.
// devices: dev_a dev_b
// call: branchy
// inputs: 5xi32 i1
func.func public @branchy(%x: tensor<5xi32>, %c: i1) -> tensor<5xi32> {
  cf.cond_br %c, ^move, ^stay
^move:
  %on_b = flow.tensor.transfer %x : tensor<5xi32> to #hal.device.promise<@dev_b>
  %t = arith.muli %on_b, %on_b : tensor<5xi32>
  %back = flow.tensor.transfer %t : tensor<5xi32> to #hal.device.promise<@dev_a>
  cf.br ^join(%back : tensor<5xi32>)
^stay:
  %s = arith.subi %x, %x : tensor<5xi32>
  cf.br ^join(%s : tensor<5xi32>)
^join(%v: tensor<5xi32>):
  %r = arith.addi %v, %x : tensor<5xi32>
  return %r : tensor<5xi32>
}
