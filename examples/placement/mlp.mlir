// A two-layer MLP whose weights are util.global constants and whose
// work names no device: `mdc-compile --place=auto` chooses where each
// matmul, elementwise op and weight goes (README.md, "Place automatically").
util.global private @w1 = dense<[[0.0, 0.1, -0.09, -0.3, -0.15, -0.33, 0.02, 0.45, -0.16, -0.21, 0.16, 0.12, 0.04, -0.31, -0.01, 0.23], [-0.45, -0.15, -0.63, -0.43, -0.61, -0.08, -0.42, 0.09, 0.05, -0.06, -0.84, -0.18, -0.02, 0.04, -0.51, -0.16], [-0.33, -0.27, 0.35, -0.27, -0.01, 0.29, -0.19, -0.04, 0.04, 0.02, -0.41, 0.03, 0.45, -0.52, 0.29, 0.04], [-0.21, 0.67, 0.25, -0.4, 0.02, 0.19, -0.06, 0.23, -0.02, 0.22, 0.48, -0.23, 0.07, -0.15, 0.04, -0.4], [-0.19, -0.07, 0.3, 0.38, -0.44, -0.26, 0.22, -0.66, -0.15, -0.03, 0.42, 0.23, -0.11, -0.12, -0.08, 0.51], [-0.14, -0.1, 0.12, -0.04, -0.07, -0.37, -0.0, -0.15, 0.39, 0.22, -0.01, 0.22, -0.11, 0.35, -0.0, 0.19], [-0.43, 0.12, -0.56, -0.68, -0.1, -0.3, 0.05, 0.75, -0.28, -0.21, 0.07, 0.16, -0.06, -0.07, 0.23, 0.17], [-0.34, -0.03, 0.01, -0.35, 0.09, -0.29, 0.32, 0.06, 0.03, -0.2, -0.04, -0.67, -0.38, 0.12, -0.71, 0.28]]> : tensor<8x16xf32>
util.global private @b1 = dense<[-0.58, 0.25, -0.28, 0.26, 0.04, -0.51, 0.42, 0.48, -0.02, -0.09, -0.05, -0.33, 0.37, -0.18, -0.02, -0.26]> : tensor<16xf32>
util.global private @w2 = dense<[[-0.21, -0.43, 0.42, -0.05], [0.32, 0.0, -0.23, -0.11], [-0.19, 0.0, -0.13, -0.1], [-0.46, -0.27, 0.55, -0.22], [-0.35, 0.11, 0.47, -0.48], [-0.07, -0.21, -0.59, 0.24], [-0.01, 0.02, -0.25, 0.15], [-0.18, -0.05, -0.37, -0.41], [0.45, -0.17, 0.1, -0.01], [-0.15, -0.17, 0.21, -0.1], [-0.05, 0.01, 0.39, 0.23], [0.13, -0.19, -0.46, 0.32], [0.32, -0.05, 0.18, 0.26], [0.28, 0.31, -0.15, 0.5], [-0.42, 0.29, 0.16, 0.29], [0.63, 0.49, -0.38, -0.56]]> : tensor<16x4xf32>

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %w1 = util.global.load @w1 : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<4x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %b1 = util.global.load @b1 : tensor<16xf32>
  %biased = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<4x16xf32>, tensor<16xf32>) outs(%e1 : tensor<4x16xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %w2 = util.global.load @w2 : tensor<16x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%biased, %w2 : tensor<4x16xf32>, tensor<16x4xf32>) outs(%z2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
