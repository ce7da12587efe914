// Attention's two batch matmuls (P x V: (b, m, k) x (b, k, n); Q x K^T: K read as
// (b, n, k)) and a linear layer of dynamic M, f32: test/lit/compile/cuda_matmul_table.test.
func.func @pv(%a: tensor<32x128x1024xf32>, %b: tensor<32x1024x64xf32>) -> tensor<32x128x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x128x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x128x64xf32>) -> tensor<32x128x64xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<32x128x1024xf32>, tensor<32x1024x64xf32>) outs(%c : tensor<32x128x64xf32>) -> tensor<32x128x64xf32>
  return %r : tensor<32x128x64xf32>
}
func.func @qk(%a: tensor<32x128x64xf32>, %b: tensor<32x1024x64xf32>) -> tensor<32x128x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x128x1024xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
  %r = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%a, %b : tensor<32x128x64xf32>, tensor<32x1024x64xf32>) outs(%c : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
  return %r : tensor<32x128x1024xf32>
}
func.func @lin(%a: tensor<?x2048xf32>, %b: tensor<2048x2048xf32>) -> tensor<?x2048xf32> {
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x2048xf32>
  %e = tensor.empty(%m) : tensor<?x2048xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<?x2048xf32>) -> tensor<?x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x2048xf32>, tensor<2048x2048xf32>) outs(%c : tensor<?x2048xf32>) -> tensor<?x2048xf32>
  return %r : tensor<?x2048xf32>
}
