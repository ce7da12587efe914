// An f16 matmul, its widening to f32, then f32 work: units 0 matmul (f16),
// 1 extf (reads f16), 2 tanh (f32), 3 addf (f32).
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>, %y: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x64xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  %m = linalg.matmul ins(%a, %b : tensor<64x64xf16>, tensor<64x64xf16>) outs(%z : tensor<64x64xf16>) -> tensor<64x64xf16>
  %e32 = tensor.empty() : tensor<64x64xf32>
  %w = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<64x64xf16>) outs(%e32 : tensor<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<64x64xf32>
  %t = math.tanh %w : tensor<64x64xf32>
  %s = arith.addf %t, %y : tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}
