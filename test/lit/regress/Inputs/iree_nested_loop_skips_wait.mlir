// An outer loop carries a tensor; an inner loop that carries only a scalar
// reads it. IREE issues the inner loop's dispatch without waiting for the
// outer iteration that wrote the tensor.
func.func public @nested(%x: tensor<?xf32>, %n: index, %m: index) -> (tensor<?xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x, %sum = %zero) -> (tensor<?xf32>, f32) {
    %inner = scf.for %j = %c0 to %m step %c1 iter_args(%s = %sum) -> f32 {
      %twice = arith.addf %acc, %acc : tensor<?xf32>
      %v = tensor.extract %twice[%j] : tensor<?xf32>
      %s2 = arith.addf %s, %v : f32
      scf.yield %s2 : f32
    }
    %one = arith.constant 1.0 : f32
    %e = tensor.empty(%d) : tensor<?xf32>
    %ones = linalg.fill ins(%one : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    %next = arith.addf %acc, %ones : tensor<?xf32>
    scf.yield %next, %inner : tensor<?xf32>, f32
  }
  return %r#0, %r#1 : tensor<?xf32>, f32
}
