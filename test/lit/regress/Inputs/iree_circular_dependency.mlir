// Stock IREE 3.13.0 fails to partition this single-device program; see
// ../iree_circular_dependency.test.
func.func public @f(%x: tensor<4xi32>, %n: index) -> (tensor<4xi32>, tensor<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v2 = arith.addi %x, %x : tensor<4xi32>
  %v3 = arith.muli %v2, %v2 : tensor<4xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %v3) -> (tensor<4xi32>) {
    %s = arith.addi %acc, %acc : tensor<4xi32>
    scf.yield %s : tensor<4xi32>
  }
  %v8 = arith.subi %r, %x : tensor<4xi32>
  %k = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %y = arith.andi %k, %v2 : tensor<4xi32>
  return %y, %v8 : tensor<4xi32>, tensor<4xi32>
}
