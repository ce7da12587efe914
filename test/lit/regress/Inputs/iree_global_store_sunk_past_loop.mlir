// See ../iree_global_store_sunk_past_loop.test: @g = x, then n times
// @g = @g + acc, acc = @g. x = 1, n = 2: 1, 2, 4.
util.global private mutable @g = dense<0> : tensor<1xi64>
util.func public @f(%x: tensor<1xi64>, %n: index) -> tensor<1xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  util.global.store %x, @g : tensor<1xi64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<1xi64>) {
    %v = util.global.load @g : tensor<1xi64>
    %s = arith.addi %v, %acc : tensor<1xi64>
    util.global.store %s, @g : tensor<1xi64>
    scf.yield %s : tensor<1xi64>
  }
  util.return %r : tensor<1xi64>
}
