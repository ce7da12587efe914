// torch's f16 linear at M = 16 (f16 operands into an f32 fill, then the
// truncation to f16) with the shipped table's f16 nt M = 16 config, a
// tensor-core one with the f16 accumulator's intrinsic:
// test/lit/regress/iree_cuda_f16_mma_on_f32_accumulator_fails.test.
module {
  func.func @linear_f16(%a: tensor<16x2048xf16>, %b: tensor<256x2048xf16>) -> tensor<16x256xf16> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x256xf32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x256xf32>) -> tensor<16x256xf32>
    %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {compilation_info = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F16_16x8x16_F16>, promote_operands = [0, 1], reduction = [0, 0, 4], subgroup = [1, 1, 0], workgroup = [16, 32, 0]}>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [128, 1, 1] subgroup_size = 32, {gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = 2>}>>} ins(%a, %b : tensor<16x2048xf16>, tensor<256x2048xf16>) outs(%c : tensor<16x256xf32>) -> tensor<16x256xf32>
    %e2 = tensor.empty() : tensor<16x256xf16>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<16x256xf32>) outs(%e2 : tensor<16x256xf16>) {
    ^bb0(%v: f32, %o: f16):
      %u = arith.truncf %v : f32 to f16
      linalg.yield %u : f16
    } -> tensor<16x256xf16>
    return %t : tensor<16x256xf16>
  }
}
