// A 64x64 matmul of element type ELT (the test writes f16, bf16, i8 and
// f32 in its place).
func.func public @f(%a: tensor<64x64xELT>, %b: tensor<64x64xELT>) -> tensor<64x64xELT> {
  %zero = arith.constant ZERO : ELT
  %e = tensor.empty() : tensor<64x64xELT>
  %z = linalg.fill ins(%zero : ELT) outs(%e : tensor<64x64xELT>) -> tensor<64x64xELT>
  %m = linalg.matmul ins(%a, %b : tensor<64x64xELT>, tensor<64x64xELT>) outs(%z : tensor<64x64xELT>) -> tensor<64x64xELT>
  return %m : tensor<64x64xELT>
}
