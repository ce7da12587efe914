// Stock IREE 3.13.0 miscompile (single device, no mdc involved): see
// ../iree_loop_init_two_dynamic_dims.test.
func.func public @f(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d2 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e0 = tensor.empty(%d1, %d2) : tensor<?x?xf32>
  %x2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e0 : tensor<?x?xf32>) {
  ^bb0(%i0: f32, %o: f32):
    %s1 = math.absf %i0 : f32
    linalg.yield %s1 : f32
  } -> tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%d2) : tensor<?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.reduce ins(%x2 : tensor<?x?xf32>) outs(%f : tensor<?xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s1 = arith.addf %in, %acc : f32
      linalg.yield %s1 : f32
    }
  %e1 = tensor.empty(%d1, %d2) : tensor<?x?xf32>
  %v10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x2 : tensor<?x?xf32>) outs(%e1 : tensor<?x?xf32>) {
  ^bb0(%i0: f32, %o: f32):
    %k = arith.constant -1.875 : f32
    %s1 = arith.addf %i0, %k : f32
    linalg.yield %s1 : f32
  } -> tensor<?x?xf32>
  %v14 = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %v10) -> (tensor<?x?xf32>) {
    %t = math.tanh %acc : tensor<?x?xf32>
    %n = arith.negf %t : tensor<?x?xf32>
    scf.yield %n : tensor<?x?xf32>
  }
  %r = arith.mulf %v14, %v14 : tensor<?x?xf32>
  return %r, %sum : tensor<?x?xf32>, tensor<?xf32>
}
