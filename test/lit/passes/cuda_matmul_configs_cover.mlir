// cuda-matmul-configs on the contractions beyond the plain matmul: the
// batch matmuls of attention, as IREE 3.13's stream IR holds torch's (Q x
// K^T: linalg.batch_matmul with maps that read K as (b, n, k); P x V: with
// no maps; and the 4-loop linalg.generic of the same maps), and matmuls of
// a dynamic M (docs/DESIGN.md section 9). The table here
// (Inputs/cuda_matmul_table_cover.json, read through --cuda-matmul-table)
// is made up for the rule, not measured: a batch_matmul takes a row of
// op "batch_matmul" of its element type, layout and M bucket whose tiles
// divide it; a dynamic M takes only a row measured for any M (m_dynamic).
// RUN: mdc-opt %s --pass=cuda-matmul-configs --cuda-matmul-table=%S/Inputs/cuda_matmul_table_cover.json | FileCheck %s
// The shipped table has no batch_matmul rows and no row for a dynamic M
// yet (bench tune's batch and dynamic runs are still to be made on a GPU):
// with it, all of these keep IREE's default.
// RUN: mdc-opt %s --pass=cuda-matmul-configs | FileCheck %s --check-prefix=SHIPPED
// A table that cannot be read is an error naming the flag and the file.
// RUN: (mdc-opt %s --pass=cuda-matmul-configs --cuda-matmul-table=%S/Inputs/no_such_table.json 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=MISSING
// RUN: echo '{"format": 2, "rows": []}' > %t.json
// RUN: (mdc-opt %s --pass=cuda-matmul-configs --cuda-matmul-table=%t.json 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=FORMAT
// RUN: echo '{"format": 1, "rows": [{"dtype": "f32", "tiles": 4}]}' > %t.field.json
// RUN: (mdc-opt %s --pass=cuda-matmul-configs --cuda-matmul-table=%t.field.json 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=FIELD

// CHECK-DAG: #[[PV:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [0, 1], reduction = [0, 0, 0, 32], thread = [1, 1, 8, 0], workgroup = [1, 32, 64, 0]}>
// CHECK-DAG: #[[QK:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [0, 1], reduction = [0, 0, 0, 16], thread = [1, 2, 4, 0], workgroup = [1, 32, 64, 0]}>
// CHECK-DAG: #[[DYN:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [0, 1], reduction = [0, 0, 32], thread = [1, 2, 0], workgroup = [16, 32, 0]}>
// CHECK-LABEL: module @cover
// P x V, the batch_matmul with no maps, and its generic: the f32 nn row.
// CHECK: stream.executable private @pv_f32
// CHECK: linalg.batch_matmul {compilation_info = #[[PV]]}
// Q x K^T, K read as (b, n, k), and its generic: the f32 nt row.
// CHECK: stream.executable private @qk_f32
// CHECK: linalg.batch_matmul indexing_maps = {{.*}} {compilation_info = #[[QK]]}
// CHECK: stream.executable private @qk_generic_f32
// CHECK: linalg.generic {{.*}} attrs = {{ *}}{compilation_info = #[[QK]]}
// CHECK: stream.executable private @pv_generic_f32
// CHECK: linalg.generic {{.*}} attrs = {{ *}}{compilation_info = #[[PV]]}
// M = 100: the bucket's tiles (M a multiple of 32) do not divide it, and
// the bucket below (M <= 16) is more than a factor 4 below.
// CHECK: stream.executable private @qk_m100_f32
// CHECK-NOT: compilation_info
// A transposed A is no layout the table knows.
// CHECK: stream.executable private @qk_tn_f32
// CHECK-NOT: compilation_info
// f16 operands accumulating in f32 (as torch's f16 bmm is at this level):
// keyed f16f32, of which this table has no row (cuda_matmul_configs_mixed.mlir
// has some).
// CHECK: stream.executable private @qk_f16_f32acc
// CHECK-NOT: compilation_info
// f16 nn at M = 16: the bucket's row keeps IREE's default (no attribute).
// CHECK: stream.executable private @pv_f16_s16
// CHECK-NOT: compilation_info
// A 4-loop generic whose body is not a multiply-add.
// CHECK: stream.executable private @qk_max_generic_f32
// CHECK-NOT: compilation_info
// A dynamic M: the f32 nn row measured for any M.
// CHECK: stream.executable private @dyn_f32
// CHECK: linalg.matmul {compilation_info = #[[DYN]]} ins({{.*}}tensor<?x2048xf32>
// No row for a dynamic M of f32 nt, of f16, of a batch_matmul; and a
// dynamic K is no shape the pass sets a config for.
// CHECK: stream.executable private @dyn_nt_f32
// CHECK-NOT: compilation_info
// CHECK: stream.executable private @dyn_f16
// CHECK-NOT: compilation_info
// CHECK: stream.executable private @dyn_qk_f32
// CHECK-NOT: compilation_info
// CHECK: stream.executable private @dyn_k_f32
// CHECK-NOT: compilation_info
// CHECK: util.func public @f

// SHIPPED-NOT: compilation_info

// MISSING: mdc-opt: error: --cuda-matmul-table={{.*}}no_such_table.json: No such file or directory
// MISSING: rc=2
// FORMAT: mdc-opt: error: --cuda-matmul-table={{.*}}.json: format 2, expected 1
// FORMAT: rc=2
// FIELD: mdc-opt: error: --cuda-matmul-table={{.*}}.json: row 0: unknown field tiles
// FIELD: rc=2

module @cover {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @pv_f32 {
    stream.executable.export public @pv_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @pv_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x1024xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x64xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 128, 1024], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x1024xf32>> -> tensor<32x128x1024xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>> -> tensor<32x1024x64xf32>
        %5 = tensor.empty() : tensor<32x128x64xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x128x64xf32>) -> tensor<32x128x64xf32>
        %7 = linalg.batch_matmul ins(%3, %4 : tensor<32x128x1024xf32>, tensor<32x1024x64xf32>) outs(%6 : tensor<32x128x64xf32>) -> tensor<32x128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 128, 64], strides = [1, 1, 1] : tensor<32x128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x64xf32>>
        return
      }
    }
  }
  stream.executable private @qk_f32 {
    stream.executable.export public @qk_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @qk_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x64xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 128, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x64xf32>> -> tensor<32x128x64xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>> -> tensor<32x1024x64xf32>
        %5 = tensor.empty() : tensor<32x128x1024xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
        %7 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%3, %4 : tensor<32x128x64xf32>, tensor<32x1024x64xf32>) outs(%6 : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 128, 1024], strides = [1, 1, 1] : tensor<32x128x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        return
      }
    }
  }
  stream.executable private @qk_generic_f32 {
    stream.executable.export public @qk_generic_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @qk_generic_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x64xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 128, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x64xf32>> -> tensor<32x128x64xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>> -> tensor<32x1024x64xf32>
        %5 = tensor.empty() : tensor<32x128x1024xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%3, %4 : tensor<32x128x64xf32>, tensor<32x1024x64xf32>) outs(%6 : tensor<32x128x1024xf32>) {
        ^bb0(%p: f32, %q: f32, %o: f32):
          %m = arith.mulf %p, %q : f32
          %s = arith.addf %o, %m : f32
          linalg.yield %s : f32
        } -> tensor<32x128x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 128, 1024], strides = [1, 1, 1] : tensor<32x128x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        return
      }
    }
  }
  stream.executable private @pv_generic_f32 {
    stream.executable.export public @pv_generic_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @pv_generic_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x1024xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x64xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 128, 1024], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x1024xf32>> -> tensor<32x128x1024xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>> -> tensor<32x1024x64xf32>
        %5 = tensor.empty() : tensor<32x128x64xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x128x64xf32>) -> tensor<32x128x64xf32>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%3, %4 : tensor<32x128x1024xf32>, tensor<32x1024x64xf32>) outs(%6 : tensor<32x128x64xf32>) {
        ^bb0(%p: f32, %q: f32, %o: f32):
          %m = arith.mulf %p, %q : f32
          %s = arith.addf %o, %m : f32
          linalg.yield %s : f32
        } -> tensor<32x128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 128, 64], strides = [1, 1, 1] : tensor<32x128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x64xf32>>
        return
      }
    }
  }
  stream.executable private @qk_m100_f32 {
    stream.executable.export public @qk_m100_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @qk_m100_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x100x64xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x100x1024xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 100, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x100x64xf32>> -> tensor<32x100x64xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>> -> tensor<32x1024x64xf32>
        %5 = tensor.empty() : tensor<32x100x1024xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x100x1024xf32>) -> tensor<32x100x1024xf32>
        %7 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%3, %4 : tensor<32x100x64xf32>, tensor<32x1024x64xf32>) outs(%6 : tensor<32x100x1024xf32>) -> tensor<32x100x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 100, 1024], strides = [1, 1, 1] : tensor<32x100x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x100x1024xf32>>
        return
      }
    }
  }
  stream.executable private @qk_tn_f32 {
    stream.executable.export public @qk_tn_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @qk_tn_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x64x128xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x64x1024xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 64, 128], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x64x128xf32>> -> tensor<32x64x128xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 64, 1024], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x64x1024xf32>> -> tensor<32x64x1024xf32>
        %5 = tensor.empty() : tensor<32x128x1024xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
        %7 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%3, %4 : tensor<32x64x128xf32>, tensor<32x64x1024xf32>) outs(%6 : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 128, 1024], strides = [1, 1, 1] : tensor<32x128x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        return
      }
    }
  }
  stream.executable private @qk_f16_f32acc {
    stream.executable.export public @qk_f16_f32acc workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @qk_f16_f32acc(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x64xf16>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf16>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 128, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x64xf16>> -> tensor<32x128x64xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf16>> -> tensor<32x1024x64xf16>
        %5 = tensor.empty() : tensor<32x128x1024xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
        %7 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%3, %4 : tensor<32x128x64xf16>, tensor<32x1024x64xf16>) outs(%6 : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 128, 1024], strides = [1, 1, 1] : tensor<32x128x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        return
      }
    }
  }
  stream.executable private @pv_f16_s16 {
    stream.executable.export public @pv_f16_s16 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @pv_f16_s16(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f16
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x16x1024xf16>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf16>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x16x64xf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 16, 1024], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x16x1024xf16>> -> tensor<32x16x1024xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf16>> -> tensor<32x1024x64xf16>
        %5 = tensor.empty() : tensor<32x16x64xf16>
        %6 = linalg.fill ins(%zero : f16) outs(%5 : tensor<32x16x64xf16>) -> tensor<32x16x64xf16>
        %7 = linalg.batch_matmul ins(%3, %4 : tensor<32x16x1024xf16>, tensor<32x1024x64xf16>) outs(%6 : tensor<32x16x64xf16>) -> tensor<32x16x64xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 16, 64], strides = [1, 1, 1] : tensor<32x16x64xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x16x64xf16>>
        return
      }
    }
  }
  stream.executable private @qk_max_generic_f32 {
    stream.executable.export public @qk_max_generic_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @qk_max_generic_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x64xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 128, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128x64xf32>> -> tensor<32x128x64xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>> -> tensor<32x1024x64xf32>
        %5 = tensor.empty() : tensor<32x128x1024xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x128x1024xf32>) -> tensor<32x128x1024xf32>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%3, %4 : tensor<32x128x64xf32>, tensor<32x1024x64xf32>) outs(%6 : tensor<32x128x1024xf32>) {
        ^bb0(%p: f32, %q: f32, %o: f32):
          %m = arith.mulf %p, %q : f32
          %s = arith.maximumf %o, %m : f32
          linalg.yield %s : f32
        } -> tensor<32x128x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, 128, 1024], strides = [1, 1, 1] : tensor<32x128x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x128x1024xf32>>
        return
      }
    }
  }
  stream.executable private @dyn_f32 {
    stream.executable.export public @dyn_f32 workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dyn_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding, %arg3: index) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %m = iree_tensor_ext.dispatch.workload.ordinal %arg3, 0 : index
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x2048xf32>>{%m}
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x2048xf32>>{%m}
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [%m, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x2048xf32>>{%m} -> tensor<?x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty(%m) : tensor<?x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<?x2048xf32>) -> tensor<?x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<?x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<?x2048xf32>) -> tensor<?x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [%m, 2048], strides = [1, 1] : tensor<?x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x2048xf32>>{%m}
        return
      }
    }
  }
  stream.executable private @dyn_nt_f32 {
    stream.executable.export public @dyn_nt_f32 workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dyn_nt_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding, %arg3: index) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %m = iree_tensor_ext.dispatch.workload.ordinal %arg3, 0 : index
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x2048xf32>>{%m}
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x2048xf32>>{%m}
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [%m, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x2048xf32>>{%m} -> tensor<?x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty(%m) : tensor<?x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<?x2048xf32>) -> tensor<?x2048xf32>
        %7 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%3, %4 : tensor<?x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<?x2048xf32>) -> tensor<?x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [%m, 2048], strides = [1, 1] : tensor<?x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x2048xf32>>{%m}
        return
      }
    }
  }
  stream.executable private @dyn_f16 {
    stream.executable.export public @dyn_f16 workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dyn_f16(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding, %arg3: index) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f16
        %m = iree_tensor_ext.dispatch.workload.ordinal %arg3, 0 : index
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x2048xf16>>{%m}
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf16>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x2048xf16>>{%m}
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [%m, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x2048xf16>>{%m} -> tensor<?x2048xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf16>> -> tensor<2048x2048xf16>
        %5 = tensor.empty(%m) : tensor<?x2048xf16>
        %6 = linalg.fill ins(%zero : f16) outs(%5 : tensor<?x2048xf16>) -> tensor<?x2048xf16>
        %7 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%3, %4 : tensor<?x2048xf16>, tensor<2048x2048xf16>) outs(%6 : tensor<?x2048xf16>) -> tensor<?x2048xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [%m, 2048], strides = [1, 1] : tensor<?x2048xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x2048xf16>>{%m}
        return
      }
    }
  }
  stream.executable private @dyn_qk_f32 {
    stream.executable.export public @dyn_qk_f32 workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dyn_qk_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding, %arg3: index) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %m = iree_tensor_ext.dispatch.workload.ordinal %arg3, 0 : index
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x?x64xf32>>{%m}
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x?x1024xf32>>{%m}
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, %m, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x?x64xf32>>{%m} -> tensor<32x?x64xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [32, 1024, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x1024x64xf32>> -> tensor<32x1024x64xf32>
        %5 = tensor.empty(%m) : tensor<32x?x1024xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x?x1024xf32>) -> tensor<32x?x1024xf32>
        %7 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%3, %4 : tensor<32x?x64xf32>, tensor<32x1024x64xf32>) outs(%6 : tensor<32x?x1024xf32>) -> tensor<32x?x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0, 0], sizes = [32, %m, 1024], strides = [1, 1, 1] : tensor<32x?x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x?x1024xf32>>{%m}
        return
      }
    }
  }
  stream.executable private @dyn_k_f32 {
    stream.executable.export public @dyn_k_f32 workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dyn_k_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding, %arg3: index) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %m = iree_tensor_ext.dispatch.workload.ordinal %arg3, 0 : index
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x?xf32>>{%m, %m}
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x2048xf32>>{%m}
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x2048xf32>>{%m}
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [%m, %m], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x?xf32>>{%m, %m} -> tensor<?x?xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [%m, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x2048xf32>>{%m} -> tensor<?x2048xf32>
        %5 = tensor.empty(%m) : tensor<?x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<?x2048xf32>) -> tensor<?x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<?x?xf32>, tensor<?x2048xf32>) outs(%6 : tensor<?x2048xf32>) -> tensor<?x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [%m, 2048], strides = [1, 1] : tensor<?x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x2048xf32>>{%m}
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %w: !stream.resource<*>, %d: index) -> (!stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>) {
    %c16 = arith.constant 16 : index
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @pv_f32::@pv_f32(%x, %w) : (tensor<32x128x1024xf32> in !stream.resource<*>{%c16}, tensor<32x1024x64xf32> in !stream.resource<*>{%c16}) -> tensor<32x128x64xf32> in !stream.resource<*>{%c16}
    %r1 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @qk_f32::@qk_f32(%x, %w) : (tensor<32x128x64xf32> in !stream.resource<*>{%c16}, tensor<32x1024x64xf32> in !stream.resource<*>{%c16}) -> tensor<32x128x1024xf32> in !stream.resource<*>{%c16}
    %r2 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @qk_generic_f32::@qk_generic_f32(%x, %w) : (tensor<32x128x64xf32> in !stream.resource<*>{%c16}, tensor<32x1024x64xf32> in !stream.resource<*>{%c16}) -> tensor<32x128x1024xf32> in !stream.resource<*>{%c16}
    %r3 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @pv_generic_f32::@pv_generic_f32(%x, %w) : (tensor<32x128x1024xf32> in !stream.resource<*>{%c16}, tensor<32x1024x64xf32> in !stream.resource<*>{%c16}) -> tensor<32x128x64xf32> in !stream.resource<*>{%c16}
    %r4 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @qk_m100_f32::@qk_m100_f32(%x, %w) : (tensor<32x100x64xf32> in !stream.resource<*>{%c16}, tensor<32x1024x64xf32> in !stream.resource<*>{%c16}) -> tensor<32x100x1024xf32> in !stream.resource<*>{%c16}
    %r5 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @qk_tn_f32::@qk_tn_f32(%x, %w) : (tensor<32x64x128xf32> in !stream.resource<*>{%c16}, tensor<32x64x1024xf32> in !stream.resource<*>{%c16}) -> tensor<32x128x1024xf32> in !stream.resource<*>{%c16}
    %r6 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @qk_f16_f32acc::@qk_f16_f32acc(%x, %w) : (tensor<32x128x64xf16> in !stream.resource<*>{%c16}, tensor<32x1024x64xf16> in !stream.resource<*>{%c16}) -> tensor<32x128x1024xf32> in !stream.resource<*>{%c16}
    %r7 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @pv_f16_s16::@pv_f16_s16(%x, %w) : (tensor<32x16x1024xf16> in !stream.resource<*>{%c16}, tensor<32x1024x64xf16> in !stream.resource<*>{%c16}) -> tensor<32x16x64xf16> in !stream.resource<*>{%c16}
    %r8 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @qk_max_generic_f32::@qk_max_generic_f32(%x, %w) : (tensor<32x128x64xf32> in !stream.resource<*>{%c16}, tensor<32x1024x64xf32> in !stream.resource<*>{%c16}) -> tensor<32x128x1024xf32> in !stream.resource<*>{%c16}
    %r9 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @dyn_f32::@dyn_f32[%d](%x, %w, %d) : (tensor<?x2048xf32>{%d} in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}, index) -> tensor<?x2048xf32>{%d} in !stream.resource<*>{%c16}
    %r10 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @dyn_nt_f32::@dyn_nt_f32[%d](%x, %w, %d) : (tensor<?x2048xf32>{%d} in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}, index) -> tensor<?x2048xf32>{%d} in !stream.resource<*>{%c16}
    %r11 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @dyn_f16::@dyn_f16[%d](%x, %w, %d) : (tensor<?x2048xf16>{%d} in !stream.resource<*>{%c16}, tensor<2048x2048xf16> in !stream.resource<*>{%c16}, index) -> tensor<?x2048xf16>{%d} in !stream.resource<*>{%c16}
    %r12 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @dyn_qk_f32::@dyn_qk_f32[%d](%x, %w, %d) : (tensor<32x?x64xf32>{%d} in !stream.resource<*>{%c16}, tensor<32x1024x64xf32> in !stream.resource<*>{%c16}, index) -> tensor<32x?x1024xf32>{%d} in !stream.resource<*>{%c16}
    %r13 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @dyn_k_f32::@dyn_k_f32[%d](%x, %w, %d) : (tensor<?x?xf32>{%d, %d} in !stream.resource<*>{%c16}, tensor<?x2048xf32>{%d} in !stream.resource<*>{%c16}, index) -> tensor<?x2048xf32>{%d} in !stream.resource<*>{%c16}
    util.return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13 : !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>
  }
}
