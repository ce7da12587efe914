// torch's f16 and bf16 matmuls as torch-mlir lowers them (f16 operands into
// an f32 linalg.fill, then an elementwise truncation back to f16; iree-turbine
// exports of F.linear, bmm and bmm of a transposed operand lower to these),
// a hand-written generic that widens with arith.extf in its body, and one
// matmul of f16 alone: test/lit/compile/cuda_matmul_mixed.test, and through
// mdc-compile --compile-to=stream the input of
// test/lit/passes/cuda_matmul_configs_mixed.mlir.
module {
  func.func @linear_f16(%a: tensor<16x2048xf16>, %b: tensor<256x2048xf16>) -> tensor<16x256xf16> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x256xf32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x256xf32>) -> tensor<16x256xf32>
    %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<16x2048xf16>, tensor<256x2048xf16>) outs(%c : tensor<16x256xf32>) -> tensor<16x256xf32>
    %e2 = tensor.empty() : tensor<16x256xf16>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<16x256xf32>) outs(%e2 : tensor<16x256xf16>) {
    ^bb0(%x: f32, %o: f16):
      %u = arith.truncf %x : f32 to f16
      linalg.yield %u : f16
    } -> tensor<16x256xf16>
    return %y : tensor<16x256xf16>
  }
  func.func @linear_bf16(%a: tensor<4x2048xbf16>, %b: tensor<256x2048xbf16>) -> tensor<4x256xbf16> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x256xf32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<4x256xf32>) -> tensor<4x256xf32>
    %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<4x2048xbf16>, tensor<256x2048xbf16>) outs(%c : tensor<4x256xf32>) -> tensor<4x256xf32>
    %e2 = tensor.empty() : tensor<4x256xbf16>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<4x256xf32>) outs(%e2 : tensor<4x256xbf16>) {
    ^bb0(%x: f32, %o: bf16):
      %u = arith.truncf %x : f32 to bf16
      linalg.yield %u : bf16
    } -> tensor<4x256xbf16>
    return %y : tensor<4x256xbf16>
  }
  func.func @mm_f16(%a: tensor<16x2048xf16>, %b: tensor<2048x256xf16>) -> tensor<16x256xf16> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x256xf32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x256xf32>) -> tensor<16x256xf32>
    %r = linalg.matmul ins(%a, %b : tensor<16x2048xf16>, tensor<2048x256xf16>) outs(%c : tensor<16x256xf32>) -> tensor<16x256xf32>
    %e2 = tensor.empty() : tensor<16x256xf16>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<16x256xf32>) outs(%e2 : tensor<16x256xf16>) {
    ^bb0(%x: f32, %o: f16):
      %u = arith.truncf %x : f32 to f16
      linalg.yield %u : f16
    } -> tensor<16x256xf16>
    return %y : tensor<16x256xf16>
  }
  func.func @extf_generic_f16(%a: tensor<32x2048xf16>, %b: tensor<2048x256xf16>) -> tensor<32x256xf16> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<32x256xf32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x256xf32>) -> tensor<32x256xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<32x2048xf16>, tensor<2048x256xf16>) outs(%c : tensor<32x256xf32>) {
    ^bb0(%p: f16, %q: f16, %o: f32):
      %pe = arith.extf %p : f16 to f32
      %qe = arith.extf %q : f16 to f32
      %m = arith.mulf %pe, %qe : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<32x256xf32>
    %e2 = tensor.empty() : tensor<32x256xf16>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<32x256xf32>) outs(%e2 : tensor<32x256xf16>) {
    ^bb0(%x: f32, %o: f16):
      %u = arith.truncf %x : f32 to f16
      linalg.yield %u : f16
    } -> tensor<32x256xf16>
    return %y : tensor<32x256xf16>
  }
  func.func @bmm_f16(%a: tensor<8x16x64xf16>, %b: tensor<8x64x128xf16>) -> tensor<8x16x128xf16> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16x128xf32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x16x128xf32>) -> tensor<8x16x128xf32>
    %r = linalg.batch_matmul ins(%a, %b : tensor<8x16x64xf16>, tensor<8x64x128xf16>) outs(%c : tensor<8x16x128xf32>) -> tensor<8x16x128xf32>
    %e2 = tensor.empty() : tensor<8x16x128xf16>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<8x16x128xf32>) outs(%e2 : tensor<8x16x128xf16>) {
    ^bb0(%x: f32, %o: f16):
      %u = arith.truncf %x : f32 to f16
      linalg.yield %u : f16
    } -> tensor<8x16x128xf16>
    return %y : tensor<8x16x128xf16>
  }
  func.func @bmm_t_bf16(%a: tensor<8x16x64xbf16>, %b: tensor<8x128x64xbf16>) -> tensor<8x16x128xbf16> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16x128xf32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x16x128xf32>) -> tensor<8x16x128xf32>
    %r = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%a, %b : tensor<8x16x64xbf16>, tensor<8x128x64xbf16>) outs(%c : tensor<8x16x128xf32>) -> tensor<8x16x128xf32>
    %e2 = tensor.empty() : tensor<8x16x128xbf16>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<8x16x128xf32>) outs(%e2 : tensor<8x16x128xbf16>) {
    ^bb0(%x: f32, %o: bf16):
      %u = arith.truncf %x : f32 to bf16
      linalg.yield %u : bf16
    } -> tensor<8x16x128xbf16>
    return %y : tensor<8x16x128xbf16>
  }
  func.func @linear_f16_same(%a: tensor<16x2048xf16>, %b: tensor<256x2048xf16>) -> tensor<16x256xf16> {
    %z = arith.constant 0.0 : f16
    %e = tensor.empty() : tensor<16x256xf16>
    %c = linalg.fill ins(%z : f16) outs(%e : tensor<16x256xf16>) -> tensor<16x256xf16>
    %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<16x2048xf16>, tensor<256x2048xf16>) outs(%c : tensor<16x256xf16>) -> tensor<16x256xf16>
    return %r : tensor<16x256xf16>
  }
}
