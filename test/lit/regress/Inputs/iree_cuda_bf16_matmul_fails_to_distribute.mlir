// A bf16 linear layer at batch 16 (y = x @ W.T, W out x in), as torch exports it.
func.func @linear(%a: tensor<16x2048xbf16>, %b: tensor<2048x2048xbf16>) -> tensor<16x2048xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x2048xbf16>
  %c = linalg.fill ins(%z : bf16) outs(%e : tensor<16x2048xbf16>) -> tensor<16x2048xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<16x2048xbf16>, tensor<2048x2048xbf16>) outs(%c : tensor<16x2048xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %o: bf16):
    %m = arith.mulf %p, %q : bf16
    %s = arith.addf %o, %m : bf16
    linalg.yield %s : bf16
  } -> tensor<16x2048xbf16>
  return %r : tensor<16x2048xbf16>
}
