// A dynamic-M f16 matmul (M x 2048 by 2048 x 2048) with a TileAndFuse MMA config.
func.func @mm(%a: tensor<?x2048xf16>, %b: tensor<2048x2048xf16>) -> tensor<?x2048xf16> {
  %z = arith.constant 0.0 : f16
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x2048xf16>
  %e = tensor.empty(%m) : tensor<?x2048xf16>
  %c = linalg.fill ins(%z : f16) outs(%e : tensor<?x2048xf16>) -> tensor<?x2048xf16>
  %r = linalg.matmul {compilation_info = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F16_16x8x16_F16>, promote_operands = [0, 1], reduction = [0, 0, 4], subgroup = [1, 1, 0], workgroup = [16, 32, 0]}>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [128, 1, 1] subgroup_size = 32, {gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = 2>}>>} ins(%a, %b : tensor<?x2048xf16>, tensor<2048x2048xf16>) outs(%c : tensor<?x2048xf16>) -> tensor<?x2048xf16>
  return %r : tensor<?x2048xf16>
}
