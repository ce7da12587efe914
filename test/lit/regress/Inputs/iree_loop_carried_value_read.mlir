// iree_loop_carried_value_folded_away.mlir with the carried value read (%a - %b).
// It compiles; see ../iree_loop_carried_value_folded_away.test.
func.func @main(%x: tensor<?xi8>) -> tensor<?xi8> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d = tensor.dim %x, %c0 : tensor<?xi8>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<?xi8>) {
    %e = tensor.empty(%d) : tensor<?xi8>
    %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%acc, %x : tensor<?xi8>, tensor<?xi8>) outs(%e : tensor<?xi8>) {
    ^bb0(%a: i8, %b: i8, %o: i8):
      %z = arith.subi %a, %b : i8
      %s = arith.addi %b, %z : i8
      %t = arith.addi %s, %s : i8
      linalg.yield %t : i8
    } -> tensor<?xi8>
    scf.yield %y : tensor<?xi8>
  }
  return %r : tensor<?xi8>
}
