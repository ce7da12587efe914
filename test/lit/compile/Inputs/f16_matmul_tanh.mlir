func.func public @f(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %c0 = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x64xf16>
  %z = linalg.fill ins(%c0 : f16) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  %m = linalg.matmul ins(%a, %b : tensor<64x64xf16>, tensor<64x64xf16>) outs(%z : tensor<64x64xf16>) -> tensor<64x64xf16>
  %t = math.tanh %m : tensor<64x64xf16>
  %s = arith.mulf %t, %a : tensor<64x64xf16>
  return %s : tensor<64x64xf16>
}
