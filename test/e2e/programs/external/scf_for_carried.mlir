// Shape: an scf.for that carries a value across devices on every
// iteration (to @dev_b, work, back to @dev_a); arguments unannotated, the
// trip count an index argument.
// devices: dev_a dev_b
// call: carried
// inputs: 4xf32 index
func.func public @carried(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %on_b = flow.tensor.transfer %acc : tensor<4xf32> to #hal.device.promise<@dev_b>
    %h = arith.addf %on_b, %on_b : tensor<4xf32>
    %back = flow.tensor.transfer %h : tensor<4xf32> to #hal.device.promise<@dev_a>
    %next = arith.subf %back, %x : tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
