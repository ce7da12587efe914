// A program's own mistake: it loads a global it never defines.
func.func @f() -> tensor<4xi8> {
  %v = util.global.load @w : tensor<4xi8>
  return %v : tensor<4xi8>
}
