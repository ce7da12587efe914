// A tuning spec that matches iree_cuda_tuning_spec_ignored.mlir's matmul
// and gives it TileAndFuse with workgroup [32, 16, 0], thread [1, 2, 0],
// reduction 32 and both operands in shared memory.
module attributes {iree_codegen.tuning_spec_with_default_entrypoint, transform.with_named_sequence} {
  transform.named_sequence @apply_op_config(%op: !transform.any_op {transform.readonly}, %config: !transform.any_param {transform.readonly}) {
    transform.annotate %op "compilation_info" = %config : !transform.any_op, !transform.any_param
    transform.yield
  }
  transform.named_sequence @match_mm(%root: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %ins, %outs = transform.iree.match.cast_compatible_dag_from_root %root {
    ^bb0(%a: tensor<32x64xf32>, %b: tensor<64x64xf32>, %c: tensor<32x64xf32>):
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<32x64xf32>, tensor<64x64xf32>) outs(%c : tensor<32x64xf32>) {
      ^bb0(%x: f32, %y: f32, %z: f32):
        %m = arith.mulf %x, %y : f32
        %s = arith.addf %z, %m : f32
        linalg.yield %s : f32
      } -> tensor<32x64xf32>
    } : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
    %cfg = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [0, 1], reduction = [0, 0, 32], thread = [1, 2, 0], workgroup = [32, 16, 0]}>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [256, 1, 1] subgroup_size = 32>> -> !transform.any_param
    transform.yield %root, %cfg : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @__kernel_config(%m: !transform.any_op {transform.consumed}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    %r = transform.foreach_match in %m @match_mm -> @apply_op_config : (!transform.any_op) -> !transform.any_op
    transform.yield %r : !transform.any_op
  }
}
