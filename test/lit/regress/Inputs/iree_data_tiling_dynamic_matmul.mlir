// A matmul of dynamic K and N whose left operand an elementwise op
// computes: IREE 3.13's data-tiling code generation fails on it.
// regress/iree_data_tiling_dynamic_matmul.test.
func.func @mm(%a: tensor<3x?xf32>, %b: tensor<?x?xf32>) -> tensor<3x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %k = tensor.dim %a, %c1 : tensor<3x?xf32>
  %te = tensor.empty(%k) : tensor<3x?xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<3x?xf32>) outs(%te : tensor<3x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = math.tanh %i : f32
    linalg.yield %s : f32
  } -> tensor<3x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<3x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x?xf32>) -> tensor<3x?xf32>
  %r = linalg.matmul ins(%t, %b : tensor<3x?xf32>, tensor<?x?xf32>) outs(%f : tensor<3x?xf32>) -> tensor<3x?xf32>
  return %r : tensor<3x?xf32>
}
