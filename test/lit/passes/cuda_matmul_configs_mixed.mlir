// cuda-matmul-configs on torch's f16 and bf16 matmuls, which accumulate in
// f32. IREE 3.13's stream IR holds them (below: mdc-compile --compile-to=stream
// of test/lit/compile/Inputs/mixed_matmuls.mlir, one cuda device) as
// linalg.matmul and linalg.batch_matmul of f16 (bf16) operands into an f32
// linalg.fill, with or without maps that read B transposed, then the
// truncation to f16 in the same dispatch; a hand-written generic that
// widens with arith.extf in its body stays a generic (docs/DESIGN.md
// section 9). Their rows are keyed "f16f32" and "bf16f32", apart from the
// rows of f16 alone. The table (Inputs/cuda_matmul_table_mixed.json) is
// made up for the rule, not measured.
// RUN: mdc-opt %s --pass=cuda-matmul-configs --cuda-matmul-table=%S/Inputs/cuda_matmul_table_mixed.json | FileCheck %s
// The shipped table's f16f32 and bf16f32 rows (bench tune --ops mixed on
// an H100, run K3): linear f16 at M = 16 gets its 16x32 MMA row, linear
// bf16 at M = 4 its split-K row, f16 nn at M = 16 its 16x64 MMA row; the
// generic and the batch matmuls (no mixed batch rows) keep IREE's default.
// RUN: mdc-opt %s --pass=cuda-matmul-configs | FileCheck %s --check-prefix=SHIPPED

// CHECK-DAG: #[[F16NT:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F32_16x8x16_F16>, promote_operands = [0, 1], reduction = [0, 0, 4], subgroup = [1, 2, 0], workgroup = [16, 64, 0]}>
// CHECK-DAG: #[[BF16NT:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{lane_basis = {{.*}}, workgroup = [4, 1, 0]}>
// CHECK-DAG: #[[F16NN:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [0, 1], reduction = [0, 0, 32], thread = [2, 4, 0], workgroup = [32, 64, 0]}>
// CHECK-DAG: #[[BATCH:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [0, 1], reduction = [0, 0, 0, 16], thread = [1, 1, 4, 0], workgroup = [1, 16, 64, 0]}>
// CHECK-DAG: #[[SAME:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F16_16x8x16_F16>
// torch's linear in f16 at M = 16: the f16f32 nt row (not the f16 nt one).
// CHECK-LABEL: stream.executable private @linear_f16_dispatch_0
// CHECK: linalg.matmul indexing_maps = {{.*}} {compilation_info = #[[F16NT]]} ins({{.*}} : tensor<16x2048xf16>, tensor<256x2048xf16>) outs({{.*}} : tensor<16x256xf32>)
// CHECK: arith.truncf
// torch's linear in bf16 at M = 4: the bf16f32 nt row.
// CHECK-LABEL: stream.executable private @linear_bf16_dispatch_0
// CHECK: linalg.matmul indexing_maps = {{.*}} {compilation_info = #[[BF16NT]]} ins({{.*}}xbf16>
// f16 x f16 -> f32 nn at M = 16: the table's f16 nn row at M = 16 is for
// f16 alone, and no f16f32 nn row holds M = 16.
// CHECK-LABEL: stream.executable private @mm_f16_dispatch_0
// CHECK-NOT: compilation_info
// The generic that widens in its body, nn at M = 32: the f16f32 nn row.
// CHECK-LABEL: stream.executable private @extf_generic_f16_dispatch_0
// CHECK: linalg.generic {{.*}} attrs = {{ *}}{compilation_info = #[[F16NN]]}
// CHECK-NEXT: ^bb0(%in: f16, %in_0: f16, %out: f32):
// CHECK-NEXT: arith.extf
// torch's bmm in f16: the f16f32 batch_matmul row.
// CHECK-LABEL: stream.executable private @bmm_f16_dispatch_0
// CHECK: linalg.batch_matmul {compilation_info = #[[BATCH]]} ins({{.*}}xf16>
// bmm of a transposed operand in bf16: no bf16f32 batch row.
// CHECK-LABEL: stream.executable private @bmm_t_bf16_dispatch_0
// CHECK-NOT: compilation_info
// A linear of f16 alone (f16 accumulator): the f16 nt row, not the f16f32 one.
// CHECK-LABEL: stream.executable private @linear_f16_same_dispatch_0
// CHECK: linalg.matmul indexing_maps = {{.*}} {compilation_info = #[[SAME]]} ins({{.*}} outs({{.*}} : tensor<16x256xf16>)

// SHIPPED-DAG: #[[S_F16NT:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F32_16x8x16_F16>, promote_operands = [0, 1], reduction = [0, 0, 4], subgroup = [1, 1, 0], workgroup = [16, 32, 0]}>
// SHIPPED-DAG: #[[S_BF16NT:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{lane_basis = {{.*}}, partial_reduction = [0, 0, 256], {{.*}}workgroup = [4, 1, 0]}>
// SHIPPED-DAG: #[[S_F16NN:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F32_16x8x16_F16>, promote_operands = [0, 1], reduction = [0, 0, 2], subgroup = [1, 1, 0], workgroup = [16, 64, 0]}>
// SHIPPED-LABEL: stream.executable private @linear_f16_dispatch_0
// SHIPPED: linalg.matmul indexing_maps = {{.*}} {compilation_info = #[[S_F16NT]]} ins({{.*}} : tensor<16x2048xf16>, tensor<256x2048xf16>)
// SHIPPED-LABEL: stream.executable private @linear_bf16_dispatch_0
// SHIPPED: linalg.matmul indexing_maps = {{.*}} {compilation_info = #[[S_BF16NT]]} ins({{.*}}xbf16>
// SHIPPED-LABEL: stream.executable private @mm_f16_dispatch_0
// SHIPPED: linalg.matmul {compilation_info = #[[S_F16NN]]} ins({{.*}} : tensor<16x2048xf16>, tensor<2048x256xf16>)
// SHIPPED-LABEL: stream.executable private @extf_generic_f16_dispatch_0
// SHIPPED-NOT: compilation_info
// SHIPPED-LABEL: stream.executable private @bmm_f16_dispatch_0
// SHIPPED-NOT: compilation_info
// SHIPPED-LABEL: stream.executable private @bmm_t_bf16_dispatch_0
// SHIPPED-NOT: compilation_info
// SHIPPED-LABEL: stream.executable private @linear_f16_same_dispatch_0

#executable_target_cuda_nvptx_fb = #hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_80", features = "+ptx76", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 1024], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 166912, max_workgroup_counts = [2147483647, 65535, 65535]>>}>
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#device_target_cuda_0_ = #hal.device.target<"cuda", {ordinal = 0 : index}, [#executable_target_cuda_nvptx_fb]> : !hal.device
module attributes {stream.affinity.default = #hal.device.affinity<@b>} {
  util.global private @b = #device_target_cuda_0_
  stream.executable private @linear_f16_dispatch_0 {
    stream.executable.export public @linear_f16_dispatch_0_matmul_16x256x2048_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @linear_f16_dispatch_0_matmul_16x256x2048_f16xf16xf32(%arg0: !stream.binding {stream.alignment = 64 : index}, %arg1: !stream.binding {stream.alignment = 64 : index}, %arg2: !stream.binding {stream.alignment = 64 : index}) {
        %cst = arith.constant 0.000000e+00 : f32
        %c0 = arith.constant 0 : index
        %0 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x2048xf16>>
        %1 = stream.binding.subspan %arg1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x2048xf16>>
        %2 = stream.binding.subspan %arg2[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x256xf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [16, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x2048xf16>> -> tensor<16x2048xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [256, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x2048xf16>> -> tensor<256x2048xf16>
        %5 = tensor.empty() : tensor<16x256xf16>
        %6 = tensor.empty() : tensor<16x256xf32>
        %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<16x256xf32>) -> tensor<16x256xf32>
        %8 = linalg.matmul indexing_maps = [#map, #map1, #map2] ins(%3, %4 : tensor<16x2048xf16>, tensor<256x2048xf16>) outs(%7 : tensor<16x256xf32>) -> tensor<16x256xf32>
        %9 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<16x256xf32>) outs(%5 : tensor<16x256xf16>) {
        ^bb0(%in: f32, %out: f16):
          %10 = arith.truncf %in : f32 to f16
          linalg.yield %10 : f16
        } -> tensor<16x256xf16>
        iree_tensor_ext.dispatch.tensor.store %9, %2, offsets = [0, 0], sizes = [16, 256], strides = [1, 1] : tensor<16x256xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x256xf16>>
        return
      }
    }
  }
  util.func public @linear_f16(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @linear_f16(%input0: tensor<16x2048xf16>, %input1: tensor<256x2048xf16>) -> (%output0: tensor<16x256xf16>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22b\22,\22spec\22:\22cuda[0]\22,\22kind\22:\22cuda\22,\22ordinal\22:0}],\22default\22:\22b\22,\22staging\22:[],\22result_devices\22:{\22linear_f16\22:{\220\22:\22b\22},\22linear_bf16\22:{\220\22:\22b\22},\22mm_f16\22:{\220\22:\22b\22},\22extf_generic_f16\22:{\220\22:\22b\22},\22bmm_f16\22:{\220\22:\22b\22},\22bmm_t_bf16\22:{\220\22:\22b\22},\22linear_f16_same\22:{\220\22:\22b\22}},\22mutable_globals\22:[]}"}} {
    %c0 = arith.constant 0 : index
    %c8192 = arith.constant 8192 : index
    %c1048576 = arith.constant 1048576 : index
    %c65536 = arith.constant 65536 : index
    %c256 = arith.constant 256 : index
    %c2048 = arith.constant 2048 : index
    %c16 = arith.constant 16 : index
    %element_type_f16 = hal.element_type<f16> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c16, %c2048]) type(%element_type_f16) encoding(%dense_row_major)
    %0 = stream.tensor.import on(#hal.device.affinity<@b>) %arg0 : !hal.buffer_view -> tensor<16x2048xf16> in !stream.resource<external>{%c65536}
    hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c256, %c2048]) type(%element_type_f16) encoding(%dense_row_major)
    %1 = stream.tensor.import on(#hal.device.affinity<@b>) %arg1 : !hal.buffer_view -> tensor<256x2048xf16> in !stream.resource<external>{%c1048576}
    %result, %result_timepoint = stream.resource.alloca uninitialized on(#hal.device.affinity<@b>) : !stream.resource<external>{%c8192} => !stream.timepoint
    %2 = stream.cmd.execute on(#hal.device.affinity<@b>) await(%result_timepoint) => with(%0 as %arg2: !stream.resource<external>{%c65536}, %1 as %arg3: !stream.resource<external>{%c1048576}, %result as %arg4: !stream.resource<external>{%c8192}) {
      stream.cmd.dispatch @linear_f16_dispatch_0::@linear_f16_dispatch_0_matmul_16x256x2048_f16xf16xf32 {
        ro %arg2[%c0 for %c65536] : !stream.resource<external>{%c65536},
        ro %arg3[%c0 for %c1048576] : !stream.resource<external>{%c1048576},
        wo %arg4[%c0 for %c8192] : !stream.resource<external>{%c8192}
      }
    } => !stream.timepoint
    %3 = stream.timepoint.await %2 => %result : !stream.resource<external>{%c8192}
    %4 = stream.tensor.export on(#hal.device.affinity<@b>) %3 : tensor<16x256xf16> in !stream.resource<external>{%c8192} -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
  stream.executable private @linear_bf16_dispatch_0 {
    stream.executable.export public @linear_bf16_dispatch_0_matmul_4x256x2048_bf16xbf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @linear_bf16_dispatch_0_matmul_4x256x2048_bf16xbf16xf32(%arg0: !stream.binding {stream.alignment = 64 : index}, %arg1: !stream.binding {stream.alignment = 64 : index}, %arg2: !stream.binding {stream.alignment = 64 : index}) {
        %cst = arith.constant 0.000000e+00 : f32
        %c0 = arith.constant 0 : index
        %0 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x2048xbf16>>
        %1 = stream.binding.subspan %arg1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x2048xbf16>>
        %2 = stream.binding.subspan %arg2[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x256xbf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [4, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x2048xbf16>> -> tensor<4x2048xbf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [256, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x2048xbf16>> -> tensor<256x2048xbf16>
        %5 = tensor.empty() : tensor<4x256xbf16>
        %6 = tensor.empty() : tensor<4x256xf32>
        %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<4x256xf32>) -> tensor<4x256xf32>
        %8 = linalg.matmul indexing_maps = [#map, #map1, #map2] ins(%3, %4 : tensor<4x2048xbf16>, tensor<256x2048xbf16>) outs(%7 : tensor<4x256xf32>) -> tensor<4x256xf32>
        %9 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<4x256xf32>) outs(%5 : tensor<4x256xbf16>) {
        ^bb0(%in: f32, %out: bf16):
          %10 = arith.truncf %in : f32 to bf16
          linalg.yield %10 : bf16
        } -> tensor<4x256xbf16>
        iree_tensor_ext.dispatch.tensor.store %9, %2, offsets = [0, 0], sizes = [4, 256], strides = [1, 1] : tensor<4x256xbf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x256xbf16>>
        return
      }
    }
  }
  util.func public @linear_bf16(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @linear_bf16(%input0: tensor<4x2048xbf16>, %input1: tensor<256x2048xbf16>) -> (%output0: tensor<4x256xbf16>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22b\22,\22spec\22:\22cuda[0]\22,\22kind\22:\22cuda\22,\22ordinal\22:0}],\22default\22:\22b\22,\22staging\22:[],\22result_devices\22:{\22linear_f16\22:{\220\22:\22b\22},\22linear_bf16\22:{\220\22:\22b\22},\22mm_f16\22:{\220\22:\22b\22},\22extf_generic_f16\22:{\220\22:\22b\22},\22bmm_f16\22:{\220\22:\22b\22},\22bmm_t_bf16\22:{\220\22:\22b\22},\22linear_f16_same\22:{\220\22:\22b\22}},\22mutable_globals\22:[]}"}} {
    %c0 = arith.constant 0 : index
    %c1048576 = arith.constant 1048576 : index
    %c16384 = arith.constant 16384 : index
    %c256 = arith.constant 256 : index
    %c2048 = arith.constant 2048 : index
    %c4 = arith.constant 4 : index
    %element_type_bf16 = hal.element_type<bf16> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c4, %c2048]) type(%element_type_bf16) encoding(%dense_row_major)
    %0 = stream.tensor.import on(#hal.device.affinity<@b>) %arg0 : !hal.buffer_view -> tensor<4x2048xbf16> in !stream.resource<external>{%c16384}
    hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c256, %c2048]) type(%element_type_bf16) encoding(%dense_row_major)
    %1 = stream.tensor.import on(#hal.device.affinity<@b>) %arg1 : !hal.buffer_view -> tensor<256x2048xbf16> in !stream.resource<external>{%c1048576}
    %result, %result_timepoint = stream.resource.alloca uninitialized on(#hal.device.affinity<@b>) : !stream.resource<external>{%c2048} => !stream.timepoint
    %2 = stream.cmd.execute on(#hal.device.affinity<@b>) await(%result_timepoint) => with(%0 as %arg2: !stream.resource<external>{%c16384}, %1 as %arg3: !stream.resource<external>{%c1048576}, %result as %arg4: !stream.resource<external>{%c2048}) {
      stream.cmd.dispatch @linear_bf16_dispatch_0::@linear_bf16_dispatch_0_matmul_4x256x2048_bf16xbf16xf32 {
        ro %arg2[%c0 for %c16384] : !stream.resource<external>{%c16384},
        ro %arg3[%c0 for %c1048576] : !stream.resource<external>{%c1048576},
        wo %arg4[%c0 for %c2048] : !stream.resource<external>{%c2048}
      }
    } => !stream.timepoint
    %3 = stream.timepoint.await %2 => %result : !stream.resource<external>{%c2048}
    %4 = stream.tensor.export on(#hal.device.affinity<@b>) %3 : tensor<4x256xbf16> in !stream.resource<external>{%c2048} -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
  stream.executable private @mm_f16_dispatch_0 {
    stream.executable.export public @mm_f16_dispatch_0_matmul_16x256x2048_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @mm_f16_dispatch_0_matmul_16x256x2048_f16xf16xf32(%arg0: !stream.binding {stream.alignment = 64 : index}, %arg1: !stream.binding {stream.alignment = 64 : index}, %arg2: !stream.binding {stream.alignment = 64 : index}) {
        %cst = arith.constant 0.000000e+00 : f32
        %c0 = arith.constant 0 : index
        %0 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x2048xf16>>
        %1 = stream.binding.subspan %arg1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x256xf16>>
        %2 = stream.binding.subspan %arg2[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x256xf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [16, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x2048xf16>> -> tensor<16x2048xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x256xf16>> -> tensor<2048x256xf16>
        %5 = tensor.empty() : tensor<16x256xf16>
        %6 = tensor.empty() : tensor<16x256xf32>
        %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<16x256xf32>) -> tensor<16x256xf32>
        %8 = linalg.matmul ins(%3, %4 : tensor<16x2048xf16>, tensor<2048x256xf16>) outs(%7 : tensor<16x256xf32>) -> tensor<16x256xf32>
        %9 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<16x256xf32>) outs(%5 : tensor<16x256xf16>) {
        ^bb0(%in: f32, %out: f16):
          %10 = arith.truncf %in : f32 to f16
          linalg.yield %10 : f16
        } -> tensor<16x256xf16>
        iree_tensor_ext.dispatch.tensor.store %9, %2, offsets = [0, 0], sizes = [16, 256], strides = [1, 1] : tensor<16x256xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x256xf16>>
        return
      }
    }
  }
  util.func public @mm_f16(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @mm_f16(%input0: tensor<16x2048xf16>, %input1: tensor<2048x256xf16>) -> (%output0: tensor<16x256xf16>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22b\22,\22spec\22:\22cuda[0]\22,\22kind\22:\22cuda\22,\22ordinal\22:0}],\22default\22:\22b\22,\22staging\22:[],\22result_devices\22:{\22linear_f16\22:{\220\22:\22b\22},\22linear_bf16\22:{\220\22:\22b\22},\22mm_f16\22:{\220\22:\22b\22},\22extf_generic_f16\22:{\220\22:\22b\22},\22bmm_f16\22:{\220\22:\22b\22},\22bmm_t_bf16\22:{\220\22:\22b\22},\22linear_f16_same\22:{\220\22:\22b\22}},\22mutable_globals\22:[]}"}} {
    %c0 = arith.constant 0 : index
    %c8192 = arith.constant 8192 : index
    %c1048576 = arith.constant 1048576 : index
    %c65536 = arith.constant 65536 : index
    %c256 = arith.constant 256 : index
    %c2048 = arith.constant 2048 : index
    %c16 = arith.constant 16 : index
    %element_type_f16 = hal.element_type<f16> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c16, %c2048]) type(%element_type_f16) encoding(%dense_row_major)
    %0 = stream.tensor.import on(#hal.device.affinity<@b>) %arg0 : !hal.buffer_view -> tensor<16x2048xf16> in !stream.resource<external>{%c65536}
    hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c2048, %c256]) type(%element_type_f16) encoding(%dense_row_major)
    %1 = stream.tensor.import on(#hal.device.affinity<@b>) %arg1 : !hal.buffer_view -> tensor<2048x256xf16> in !stream.resource<external>{%c1048576}
    %result, %result_timepoint = stream.resource.alloca uninitialized on(#hal.device.affinity<@b>) : !stream.resource<external>{%c8192} => !stream.timepoint
    %2 = stream.cmd.execute on(#hal.device.affinity<@b>) await(%result_timepoint) => with(%0 as %arg2: !stream.resource<external>{%c65536}, %1 as %arg3: !stream.resource<external>{%c1048576}, %result as %arg4: !stream.resource<external>{%c8192}) {
      stream.cmd.dispatch @mm_f16_dispatch_0::@mm_f16_dispatch_0_matmul_16x256x2048_f16xf16xf32 {
        ro %arg2[%c0 for %c65536] : !stream.resource<external>{%c65536},
        ro %arg3[%c0 for %c1048576] : !stream.resource<external>{%c1048576},
        wo %arg4[%c0 for %c8192] : !stream.resource<external>{%c8192}
      }
    } => !stream.timepoint
    %3 = stream.timepoint.await %2 => %result : !stream.resource<external>{%c8192}
    %4 = stream.tensor.export on(#hal.device.affinity<@b>) %3 : tensor<16x256xf16> in !stream.resource<external>{%c8192} -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
  stream.executable private @extf_generic_f16_dispatch_0 {
    stream.executable.export public @extf_generic_f16_dispatch_0_matmul_like_32x256x2048_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @extf_generic_f16_dispatch_0_matmul_like_32x256x2048_f16xf16xf32(%arg0: !stream.binding {stream.alignment = 64 : index}, %arg1: !stream.binding {stream.alignment = 64 : index}, %arg2: !stream.binding {stream.alignment = 64 : index}) {
        %cst = arith.constant 0.000000e+00 : f32
        %c0 = arith.constant 0 : index
        %0 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf16>>
        %1 = stream.binding.subspan %arg1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x256xf16>>
        %2 = stream.binding.subspan %arg2[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x256xf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf16>> -> tensor<32x2048xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x256xf16>> -> tensor<2048x256xf16>
        %5 = tensor.empty() : tensor<32x256xf16>
        %6 = tensor.empty() : tensor<32x256xf32>
        %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<32x256xf32>) -> tensor<32x256xf32>
        %8 = linalg.generic {indexing_maps = [#map, #map4, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%3, %4 : tensor<32x2048xf16>, tensor<2048x256xf16>) outs(%7 : tensor<32x256xf32>) {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %10 = arith.extf %in : f16 to f32
          %11 = arith.extf %in_0 : f16 to f32
          %12 = arith.mulf %10, %11 : f32
          %13 = arith.addf %out, %12 : f32
          linalg.yield %13 : f32
        } -> tensor<32x256xf32>
        %9 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<32x256xf32>) outs(%5 : tensor<32x256xf16>) {
        ^bb0(%in: f32, %out: f16):
          %10 = arith.truncf %in : f32 to f16
          linalg.yield %10 : f16
        } -> tensor<32x256xf16>
        iree_tensor_ext.dispatch.tensor.store %9, %2, offsets = [0, 0], sizes = [32, 256], strides = [1, 1] : tensor<32x256xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x256xf16>>
        return
      }
    }
  }
  util.func public @extf_generic_f16(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @extf_generic_f16(%input0: tensor<32x2048xf16>, %input1: tensor<2048x256xf16>) -> (%output0: tensor<32x256xf16>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22b\22,\22spec\22:\22cuda[0]\22,\22kind\22:\22cuda\22,\22ordinal\22:0}],\22default\22:\22b\22,\22staging\22:[],\22result_devices\22:{\22linear_f16\22:{\220\22:\22b\22},\22linear_bf16\22:{\220\22:\22b\22},\22mm_f16\22:{\220\22:\22b\22},\22extf_generic_f16\22:{\220\22:\22b\22},\22bmm_f16\22:{\220\22:\22b\22},\22bmm_t_bf16\22:{\220\22:\22b\22},\22linear_f16_same\22:{\220\22:\22b\22}},\22mutable_globals\22:[]}"}} {
    %c0 = arith.constant 0 : index
    %c16384 = arith.constant 16384 : index
    %c1048576 = arith.constant 1048576 : index
    %c131072 = arith.constant 131072 : index
    %c256 = arith.constant 256 : index
    %c2048 = arith.constant 2048 : index
    %c32 = arith.constant 32 : index
    %element_type_f16 = hal.element_type<f16> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c32, %c2048]) type(%element_type_f16) encoding(%dense_row_major)
    %0 = stream.tensor.import on(#hal.device.affinity<@b>) %arg0 : !hal.buffer_view -> tensor<32x2048xf16> in !stream.resource<external>{%c131072}
    hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c2048, %c256]) type(%element_type_f16) encoding(%dense_row_major)
    %1 = stream.tensor.import on(#hal.device.affinity<@b>) %arg1 : !hal.buffer_view -> tensor<2048x256xf16> in !stream.resource<external>{%c1048576}
    %result, %result_timepoint = stream.resource.alloca uninitialized on(#hal.device.affinity<@b>) : !stream.resource<external>{%c16384} => !stream.timepoint
    %2 = stream.cmd.execute on(#hal.device.affinity<@b>) await(%result_timepoint) => with(%0 as %arg2: !stream.resource<external>{%c131072}, %1 as %arg3: !stream.resource<external>{%c1048576}, %result as %arg4: !stream.resource<external>{%c16384}) {
      stream.cmd.dispatch @extf_generic_f16_dispatch_0::@extf_generic_f16_dispatch_0_matmul_like_32x256x2048_f16xf16xf32 {
        ro %arg2[%c0 for %c131072] : !stream.resource<external>{%c131072},
        ro %arg3[%c0 for %c1048576] : !stream.resource<external>{%c1048576},
        wo %arg4[%c0 for %c16384] : !stream.resource<external>{%c16384}
      }
    } => !stream.timepoint
    %3 = stream.timepoint.await %2 => %result : !stream.resource<external>{%c16384}
    %4 = stream.tensor.export on(#hal.device.affinity<@b>) %3 : tensor<32x256xf16> in !stream.resource<external>{%c16384} -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
  stream.executable private @bmm_f16_dispatch_0 {
    stream.executable.export public @bmm_f16_dispatch_0_batch_matmul_8x16x128x64_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @bmm_f16_dispatch_0_batch_matmul_8x16x128x64_f16xf16xf32(%arg0: !stream.binding {stream.alignment = 64 : index}, %arg1: !stream.binding {stream.alignment = 64 : index}, %arg2: !stream.binding {stream.alignment = 64 : index}) {
        %cst = arith.constant 0.000000e+00 : f32
        %c0 = arith.constant 0 : index
        %0 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x16x64xf16>>
        %1 = stream.binding.subspan %arg1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x64x128xf16>>
        %2 = stream.binding.subspan %arg2[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x16x128xf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [8, 16, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x16x64xf16>> -> tensor<8x16x64xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [8, 64, 128], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x64x128xf16>> -> tensor<8x64x128xf16>
        %5 = tensor.empty() : tensor<8x16x128xf16>
        %6 = tensor.empty() : tensor<8x16x128xf32>
        %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<8x16x128xf32>) -> tensor<8x16x128xf32>
        %8 = linalg.batch_matmul ins(%3, %4 : tensor<8x16x64xf16>, tensor<8x64x128xf16>) outs(%7 : tensor<8x16x128xf32>) -> tensor<8x16x128xf32>
        %9 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<8x16x128xf32>) outs(%5 : tensor<8x16x128xf16>) {
        ^bb0(%in: f32, %out: f16):
          %10 = arith.truncf %in : f32 to f16
          linalg.yield %10 : f16
        } -> tensor<8x16x128xf16>
        iree_tensor_ext.dispatch.tensor.store %9, %2, offsets = [0, 0, 0], sizes = [8, 16, 128], strides = [1, 1, 1] : tensor<8x16x128xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x16x128xf16>>
        return
      }
    }
  }
  util.func public @bmm_f16(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @bmm_f16(%input0: tensor<8x16x64xf16>, %input1: tensor<8x64x128xf16>) -> (%output0: tensor<8x16x128xf16>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22b\22,\22spec\22:\22cuda[0]\22,\22kind\22:\22cuda\22,\22ordinal\22:0}],\22default\22:\22b\22,\22staging\22:[],\22result_devices\22:{\22linear_f16\22:{\220\22:\22b\22},\22linear_bf16\22:{\220\22:\22b\22},\22mm_f16\22:{\220\22:\22b\22},\22extf_generic_f16\22:{\220\22:\22b\22},\22bmm_f16\22:{\220\22:\22b\22},\22bmm_t_bf16\22:{\220\22:\22b\22},\22linear_f16_same\22:{\220\22:\22b\22}},\22mutable_globals\22:[]}"}} {
    %c0 = arith.constant 0 : index
    %c32768 = arith.constant 32768 : index
    %c131072 = arith.constant 131072 : index
    %c16384 = arith.constant 16384 : index
    %c128 = arith.constant 128 : index
    %c64 = arith.constant 64 : index
    %c16 = arith.constant 16 : index
    %c8 = arith.constant 8 : index
    %element_type_f16 = hal.element_type<f16> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c8, %c16, %c64]) type(%element_type_f16) encoding(%dense_row_major)
    %0 = stream.tensor.import on(#hal.device.affinity<@b>) %arg0 : !hal.buffer_view -> tensor<8x16x64xf16> in !stream.resource<external>{%c16384}
    hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c8, %c64, %c128]) type(%element_type_f16) encoding(%dense_row_major)
    %1 = stream.tensor.import on(#hal.device.affinity<@b>) %arg1 : !hal.buffer_view -> tensor<8x64x128xf16> in !stream.resource<external>{%c131072}
    %result, %result_timepoint = stream.resource.alloca uninitialized on(#hal.device.affinity<@b>) : !stream.resource<external>{%c32768} => !stream.timepoint
    %2 = stream.cmd.execute on(#hal.device.affinity<@b>) await(%result_timepoint) => with(%0 as %arg2: !stream.resource<external>{%c16384}, %1 as %arg3: !stream.resource<external>{%c131072}, %result as %arg4: !stream.resource<external>{%c32768}) {
      stream.cmd.dispatch @bmm_f16_dispatch_0::@bmm_f16_dispatch_0_batch_matmul_8x16x128x64_f16xf16xf32 {
        ro %arg2[%c0 for %c16384] : !stream.resource<external>{%c16384},
        ro %arg3[%c0 for %c131072] : !stream.resource<external>{%c131072},
        wo %arg4[%c0 for %c32768] : !stream.resource<external>{%c32768}
      }
    } => !stream.timepoint
    %3 = stream.timepoint.await %2 => %result : !stream.resource<external>{%c32768}
    %4 = stream.tensor.export on(#hal.device.affinity<@b>) %3 : tensor<8x16x128xf16> in !stream.resource<external>{%c32768} -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
  stream.executable private @bmm_t_bf16_dispatch_0 {
    stream.executable.export public @bmm_t_bf16_dispatch_0_batch_matmul_8x16x128x64_bf16xbf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @bmm_t_bf16_dispatch_0_batch_matmul_8x16x128x64_bf16xbf16xf32(%arg0: !stream.binding {stream.alignment = 64 : index}, %arg1: !stream.binding {stream.alignment = 64 : index}, %arg2: !stream.binding {stream.alignment = 64 : index}) {
        %cst = arith.constant 0.000000e+00 : f32
        %c0 = arith.constant 0 : index
        %0 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x16x64xbf16>>
        %1 = stream.binding.subspan %arg1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x128x64xbf16>>
        %2 = stream.binding.subspan %arg2[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x16x128xbf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [8, 16, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x16x64xbf16>> -> tensor<8x16x64xbf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [8, 128, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x128x64xbf16>> -> tensor<8x128x64xbf16>
        %5 = tensor.empty() : tensor<8x16x128xbf16>
        %6 = tensor.empty() : tensor<8x16x128xf32>
        %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<8x16x128xf32>) -> tensor<8x16x128xf32>
        %8 = linalg.batch_matmul indexing_maps = [#map6, #map7, #map8] ins(%3, %4 : tensor<8x16x64xbf16>, tensor<8x128x64xbf16>) outs(%7 : tensor<8x16x128xf32>) -> tensor<8x16x128xf32>
        %9 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<8x16x128xf32>) outs(%5 : tensor<8x16x128xbf16>) {
        ^bb0(%in: f32, %out: bf16):
          %10 = arith.truncf %in : f32 to bf16
          linalg.yield %10 : bf16
        } -> tensor<8x16x128xbf16>
        iree_tensor_ext.dispatch.tensor.store %9, %2, offsets = [0, 0, 0], sizes = [8, 16, 128], strides = [1, 1, 1] : tensor<8x16x128xbf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x16x128xbf16>>
        return
      }
    }
  }
  util.func public @bmm_t_bf16(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @bmm_t_bf16(%input0: tensor<8x16x64xbf16>, %input1: tensor<8x128x64xbf16>) -> (%output0: tensor<8x16x128xbf16>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22b\22,\22spec\22:\22cuda[0]\22,\22kind\22:\22cuda\22,\22ordinal\22:0}],\22default\22:\22b\22,\22staging\22:[],\22result_devices\22:{\22linear_f16\22:{\220\22:\22b\22},\22linear_bf16\22:{\220\22:\22b\22},\22mm_f16\22:{\220\22:\22b\22},\22extf_generic_f16\22:{\220\22:\22b\22},\22bmm_f16\22:{\220\22:\22b\22},\22bmm_t_bf16\22:{\220\22:\22b\22},\22linear_f16_same\22:{\220\22:\22b\22}},\22mutable_globals\22:[]}"}} {
    %c0 = arith.constant 0 : index
    %c32768 = arith.constant 32768 : index
    %c131072 = arith.constant 131072 : index
    %c16384 = arith.constant 16384 : index
    %c128 = arith.constant 128 : index
    %c64 = arith.constant 64 : index
    %c16 = arith.constant 16 : index
    %c8 = arith.constant 8 : index
    %element_type_bf16 = hal.element_type<bf16> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c8, %c16, %c64]) type(%element_type_bf16) encoding(%dense_row_major)
    %0 = stream.tensor.import on(#hal.device.affinity<@b>) %arg0 : !hal.buffer_view -> tensor<8x16x64xbf16> in !stream.resource<external>{%c16384}
    hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c8, %c128, %c64]) type(%element_type_bf16) encoding(%dense_row_major)
    %1 = stream.tensor.import on(#hal.device.affinity<@b>) %arg1 : !hal.buffer_view -> tensor<8x128x64xbf16> in !stream.resource<external>{%c131072}
    %result, %result_timepoint = stream.resource.alloca uninitialized on(#hal.device.affinity<@b>) : !stream.resource<external>{%c32768} => !stream.timepoint
    %2 = stream.cmd.execute on(#hal.device.affinity<@b>) await(%result_timepoint) => with(%0 as %arg2: !stream.resource<external>{%c16384}, %1 as %arg3: !stream.resource<external>{%c131072}, %result as %arg4: !stream.resource<external>{%c32768}) {
      stream.cmd.dispatch @bmm_t_bf16_dispatch_0::@bmm_t_bf16_dispatch_0_batch_matmul_8x16x128x64_bf16xbf16xf32 {
        ro %arg2[%c0 for %c16384] : !stream.resource<external>{%c16384},
        ro %arg3[%c0 for %c131072] : !stream.resource<external>{%c131072},
        wo %arg4[%c0 for %c32768] : !stream.resource<external>{%c32768}
      }
    } => !stream.timepoint
    %3 = stream.timepoint.await %2 => %result : !stream.resource<external>{%c32768}
    %4 = stream.tensor.export on(#hal.device.affinity<@b>) %3 : tensor<8x16x128xbf16> in !stream.resource<external>{%c32768} -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
  stream.executable private @linear_f16_same_dispatch_0 {
    stream.executable.export public @linear_f16_same_dispatch_0_matmul_16x256x2048_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @linear_f16_same_dispatch_0_matmul_16x256x2048_f16(%arg0: !stream.binding {stream.alignment = 64 : index}, %arg1: !stream.binding {stream.alignment = 64 : index}, %arg2: !stream.binding {stream.alignment = 64 : index}) {
        %cst = arith.constant 0.000000e+00 : f16
        %c0 = arith.constant 0 : index
        %0 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x2048xf16>>
        %1 = stream.binding.subspan %arg1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x2048xf16>>
        %2 = stream.binding.subspan %arg2[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x256xf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [16, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x2048xf16>> -> tensor<16x2048xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [256, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x2048xf16>> -> tensor<256x2048xf16>
        %5 = tensor.empty() : tensor<16x256xf16>
        %6 = linalg.fill ins(%cst : f16) outs(%5 : tensor<16x256xf16>) -> tensor<16x256xf16>
        %7 = linalg.matmul indexing_maps = [#map, #map1, #map2] ins(%3, %4 : tensor<16x2048xf16>, tensor<256x2048xf16>) outs(%6 : tensor<16x256xf16>) -> tensor<16x256xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [16, 256], strides = [1, 1] : tensor<16x256xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x256xf16>>
        return
      }
    }
  }
  util.func public @linear_f16_same(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @linear_f16_same(%input0: tensor<16x2048xf16>, %input1: tensor<256x2048xf16>) -> (%output0: tensor<16x256xf16>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22b\22,\22spec\22:\22cuda[0]\22,\22kind\22:\22cuda\22,\22ordinal\22:0}],\22default\22:\22b\22,\22staging\22:[],\22result_devices\22:{\22linear_f16\22:{\220\22:\22b\22},\22linear_bf16\22:{\220\22:\22b\22},\22mm_f16\22:{\220\22:\22b\22},\22extf_generic_f16\22:{\220\22:\22b\22},\22bmm_f16\22:{\220\22:\22b\22},\22bmm_t_bf16\22:{\220\22:\22b\22},\22linear_f16_same\22:{\220\22:\22b\22}},\22mutable_globals\22:[]}"}} {
    %c0 = arith.constant 0 : index
    %c8192 = arith.constant 8192 : index
    %c1048576 = arith.constant 1048576 : index
    %c65536 = arith.constant 65536 : index
    %c256 = arith.constant 256 : index
    %c2048 = arith.constant 2048 : index
    %c16 = arith.constant 16 : index
    %element_type_f16 = hal.element_type<f16> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c16, %c2048]) type(%element_type_f16) encoding(%dense_row_major)
    %0 = stream.tensor.import on(#hal.device.affinity<@b>) %arg0 : !hal.buffer_view -> tensor<16x2048xf16> in !stream.resource<external>{%c65536}
    hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c256, %c2048]) type(%element_type_f16) encoding(%dense_row_major)
    %1 = stream.tensor.import on(#hal.device.affinity<@b>) %arg1 : !hal.buffer_view -> tensor<256x2048xf16> in !stream.resource<external>{%c1048576}
    %result, %result_timepoint = stream.resource.alloca uninitialized on(#hal.device.affinity<@b>) : !stream.resource<external>{%c8192} => !stream.timepoint
    %2 = stream.cmd.execute on(#hal.device.affinity<@b>) await(%result_timepoint) => with(%0 as %arg2: !stream.resource<external>{%c65536}, %1 as %arg3: !stream.resource<external>{%c1048576}, %result as %arg4: !stream.resource<external>{%c8192}) {
      stream.cmd.dispatch @linear_f16_same_dispatch_0::@linear_f16_same_dispatch_0_matmul_16x256x2048_f16 {
        ro %arg2[%c0 for %c65536] : !stream.resource<external>{%c65536},
        ro %arg3[%c0 for %c1048576] : !stream.resource<external>{%c1048576},
        wo %arg4[%c0 for %c8192] : !stream.resource<external>{%c8192}
      }
    } => !stream.timepoint
    %3 = stream.timepoint.await %2 => %result : !stream.resource<external>{%c8192}
    %4 = stream.tensor.export on(#hal.device.affinity<@b>) %3 : tensor<16x256xf16> in !stream.resource<external>{%c8192} -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
}
