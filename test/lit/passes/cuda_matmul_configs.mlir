// cuda-matmul-configs: a matmul in an executable that only a cuda device runs
// gets the measured #iree_codegen.compilation_info of its element type,
// layout and M bucket (passes/targets/cuda/matmul_table.json): linalg.matmul, the
// same with transposing indexing maps (weight out x in, as torch.nn.Linear
// stores it) and the linalg.generic contraction, f32 and f16. Nothing else
// gets one: an executable a CPU also runs (until executable-per-target gives
// the cuda dispatches their own copy), one on a CPU or a Vulkan device, a
// shape or element type the table does not cover, or an op that is not a
// multiply-add contraction.
// RUN: mdc-opt %s --pass=cuda-matmul-configs --split-input-file | FileCheck %s
// With executable-per-target first, as the pipeline runs them, the cuda
// copy of the executable both devices run gets the config, and the CPU's
// original does not.
// RUN: mdc-opt %s --pass=executable-per-target,cuda-matmul-configs --split-input-file | FileCheck %s --check-prefix=SPLIT
// Running it twice changes nothing more.
// RUN: mdc-opt %s --pass=cuda-matmul-configs --split-input-file > %t.once
// RUN: mdc-opt %s --pass=cuda-matmul-configs,cuda-matmul-configs --split-input-file > %t.twice
// RUN: diff %t.once %t.twice
// Modules with no cuda device are unchanged: the pass's output is the
// input as mdc-opt prints it.
// RUN: mdc-opt %s --split-input-file > %t.none
// RUN: awk '/^\/\/ -----/{n++} n>=1' %t.none > %t.none.tail
// RUN: awk '/^\/\/ -----/{n++} n>=1' %t.once > %t.once.tail
// RUN: diff %t.none.tail %t.once.tail

// Which config a row sets is the table's (passes/targets/cuda/matmul_table.json,
// measured; test/unit/test_matmul_table.py checks the rows): here, that a
// covered matmul gets one and the others none.
// CHECK-LABEL: module @cuda_and_cpu
// CHECK: stream.executable private @mm_f32
// CHECK: linalg.matmul {compilation_info = #compilation{{[0-9]*}}} ins({{.*}}tensor<32x2048xf32>, tensor<2048x2048xf32>)
// CHECK: stream.executable private @mm_nt_f16
// CHECK: linalg.matmul indexing_maps = {{.*}} {compilation_info = #compilation{{[0-9]*}}} ins({{.*}}tensor<32x2048xf16>, tensor<2048x2048xf16>)
// CHECK: stream.executable private @linear_f32
// CHECK: linalg.generic {{.*}} attrs =  {compilation_info = #compilation{{[0-9]*}}}
// f16 nn at M = 32: the tuner measured it and kept IREE's default (a row
// with no attribute), so no smaller M's row stands in.
// CHECK: stream.executable private @generic_nn_f16
// CHECK-NOT: compilation_info
// CHECK: stream.executable private @head_f32
// CHECK: linalg.matmul indexing_maps = {{.*}} {compilation_info = #compilation{{[0-9]*}}} ins({{.*}}tensor<8192x2048xf32>)
// CHECK: stream.executable private @on_cpu
// CHECK-NOT: compilation_info
// CHECK: stream.executable private @batch64
// CHECK: linalg.matmul {compilation_info = #compilation{{[0-9]*}}} ins({{.*}}tensor<64x2048xf32>
// CHECK: stream.executable private @odd_k
// CHECK-NOT: compilation_info
// CHECK: stream.executable private @not_a_matmul
// CHECK-NOT: compilation_info
// bf16 at M = 32 has no row of its own (no candidate was right at every
// tuned shape; IREE's default does not compile there): the M = 8 row
// stands in, M being within FALLBACK_SPAN of it and a multiple of its tile.
// CHECK: stream.executable private @bf16
// CHECK: linalg.matmul {compilation_info = #compilation{{[0-9]*}}} ins({{.*}}tensor<32x2048xbf16>, tensor<2048x2048xbf16>)
// CHECK: util.func public @f

// SPLIT-LABEL: module @cuda_and_cpu
// SPLIT: stream.executable private @on_both_t {
// SPLIT: linalg.matmul {compilation_info =
// SPLIT: stream.executable private @on_both {
// SPLIT-NOT: compilation_info
// SPLIT: stream.executable private @batch1
// SPLIT: util.func public @f
// SPLIT: on(#hal.device.affinity<@device_a>) @on_both::@on_both
// SPLIT: on(#hal.device.affinity<@device_b>) @on_both_t::@on_both

module @cuda_and_cpu {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @mm_f32 {
    stream.executable.export public @mm_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @mm_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>> -> tensor<32x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<32x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<32x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        return
      }
    }
  }
  stream.executable private @mm_nt_f16 {
    stream.executable.export public @mm_nt_f16 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @mm_nt_f16(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f16
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf16>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf16>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf16>> -> tensor<32x2048xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf16>> -> tensor<2048x2048xf16>
        %5 = tensor.empty() : tensor<32x2048xf16>
        %6 = linalg.fill ins(%zero : f16) outs(%5 : tensor<32x2048xf16>) -> tensor<32x2048xf16>
        %7 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%3, %4 : tensor<32x2048xf16>, tensor<2048x2048xf16>) outs(%6 : tensor<32x2048xf16>) -> tensor<32x2048xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf16>>
        return
      }
    }
  }
  stream.executable private @linear_f32 {
    stream.executable.export public @linear_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @linear_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>> -> tensor<32x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<32x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%3, %4 : tensor<32x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<32x2048xf32>) {
        ^bb0(%p: f32, %q: f32, %o: f32):
          %m = arith.mulf %p, %q : f32
          %s = arith.addf %o, %m : f32
          linalg.yield %s : f32
        } -> tensor<32x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        return
      }
    }
  }
  stream.executable private @generic_nn_f16 {
    stream.executable.export public @generic_nn_f16 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @generic_nn_f16(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f16
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf16>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf16>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf16>> -> tensor<32x2048xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf16>> -> tensor<2048x2048xf16>
        %5 = tensor.empty() : tensor<32x2048xf16>
        %6 = linalg.fill ins(%zero : f16) outs(%5 : tensor<32x2048xf16>) -> tensor<32x2048xf16>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%3, %4 : tensor<32x2048xf16>, tensor<2048x2048xf16>) outs(%6 : tensor<32x2048xf16>) {
        ^bb0(%p: f16, %q: f16, %o: f16):
          %m = arith.mulf %p, %q : f16
          %s = arith.addf %o, %m : f16
          linalg.yield %s : f16
        } -> tensor<32x2048xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf16>>
        return
      }
    }
  }
  stream.executable private @head_f32 {
    stream.executable.export public @head_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @head_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<8192x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x8192xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>> -> tensor<32x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [8192, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8192x2048xf32>> -> tensor<8192x2048xf32>
        %5 = tensor.empty() : tensor<32x8192xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x8192xf32>) -> tensor<32x8192xf32>
        %7 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%3, %4 : tensor<32x2048xf32>, tensor<8192x2048xf32>) outs(%6 : tensor<32x8192xf32>) -> tensor<32x8192xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 8192], strides = [1, 1] : tensor<32x8192xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x8192xf32>>
        return
      }
    }
  }
  stream.executable private @on_cpu {
    stream.executable.export public @on_cpu workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @on_cpu(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>> -> tensor<32x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<32x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<32x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        return
      }
    }
  }
  stream.executable private @on_both {
    stream.executable.export public @on_both workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @on_both(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>> -> tensor<32x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<32x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<32x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        return
      }
    }
  }
  stream.executable private @batch1 {
    stream.executable.export public @batch1 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @batch1(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [1, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x2048xf32>> -> tensor<1x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<1x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<1x2048xf32>) -> tensor<1x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<1x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<1x2048xf32>) -> tensor<1x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [1, 2048], strides = [1, 1] : tensor<1x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x2048xf32>>
        return
      }
    }
  }
  stream.executable private @batch64 {
    stream.executable.export public @batch64 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @batch64(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [64, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x2048xf32>> -> tensor<64x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<64x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<64x2048xf32>) -> tensor<64x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<64x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<64x2048xf32>) -> tensor<64x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [64, 2048], strides = [1, 1] : tensor<64x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x2048xf32>>
        return
      }
    }
  }
  stream.executable private @odd_k {
    stream.executable.export public @odd_k workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @odd_k(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x100xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<100x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 100], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x100xf32>> -> tensor<32x100xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [100, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<100x2048xf32>> -> tensor<100x2048xf32>
        %5 = tensor.empty() : tensor<32x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<32x100xf32>, tensor<100x2048xf32>) outs(%6 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        return
      }
    }
  }
  stream.executable private @not_a_matmul {
    stream.executable.export public @not_a_matmul workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @not_a_matmul(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>> -> tensor<32x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<32x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%3, %4 : tensor<32x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<32x2048xf32>) {
        ^bb0(%p: f32, %q: f32, %o: f32):
          %m = arith.mulf %p, %q : f32
          %s = arith.maximumf %o, %m : f32
          linalg.yield %s : f32
        } -> tensor<32x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        return
      }
    }
  }
  stream.executable private @bf16 {
    stream.executable.export public @bf16 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @bf16(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : bf16
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xbf16>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xbf16>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xbf16>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xbf16>> -> tensor<32x2048xbf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xbf16>> -> tensor<2048x2048xbf16>
        %5 = tensor.empty() : tensor<32x2048xbf16>
        %6 = linalg.fill ins(%zero : bf16) outs(%5 : tensor<32x2048xbf16>) -> tensor<32x2048xbf16>
        %7 = linalg.matmul ins(%3, %4 : tensor<32x2048xbf16>, tensor<2048x2048xbf16>) outs(%6 : tensor<32x2048xbf16>) -> tensor<32x2048xbf16>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xbf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xbf16>>
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %w: !stream.resource<*>) -> (!stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>) {
    %c16 = arith.constant 16 : index
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @mm_f32::@mm_f32(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    %r1 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @mm_nt_f16::@mm_nt_f16(%x, %w) : (tensor<32x2048xf16> in !stream.resource<*>{%c16}, tensor<2048x2048xf16> in !stream.resource<*>{%c16}) -> tensor<32x2048xf16> in !stream.resource<*>{%c16}
    %r2 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @linear_f32::@linear_f32(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    %r3 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @generic_nn_f16::@generic_nn_f16(%x, %w) : (tensor<32x2048xf16> in !stream.resource<*>{%c16}, tensor<2048x2048xf16> in !stream.resource<*>{%c16}) -> tensor<32x2048xf16> in !stream.resource<*>{%c16}
    %r4 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @head_f32::@head_f32(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<8192x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x8192xf32> in !stream.resource<*>{%c16}
    %r5 = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @on_cpu::@on_cpu(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    %r6 = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @on_both::@on_both(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    %r7 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @on_both::@on_both(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    %r8 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @batch1::@batch1(%x, %w) : (tensor<1x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<1x2048xf32> in !stream.resource<*>{%c16}
    %r9 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @batch64::@batch64(%x, %w) : (tensor<64x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<64x2048xf32> in !stream.resource<*>{%c16}
    %r10 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @odd_k::@odd_k(%x, %w) : (tensor<32x100xf32> in !stream.resource<*>{%c16}, tensor<100x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    %r11 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @not_a_matmul::@not_a_matmul(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    %r12 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @bf16::@bf16(%x, %w) : (tensor<32x2048xbf16> in !stream.resource<*>{%c16}, tensor<2048x2048xbf16> in !stream.resource<*>{%c16}) -> tensor<32x2048xbf16> in !stream.resource<*>{%c16}
    util.return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12 : !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>
  }
}

// -----

module @vulkan_and_cpu {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"vulkan", {ordinal = 0 : index}, [#hal.executable.target<"vulkan-spirv", "vulkan-spirv-fb">]> : !hal.device
  stream.executable private @mm_f32 {
    stream.executable.export public @mm_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @mm_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>> -> tensor<32x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<32x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<32x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %w: !stream.resource<*>) -> (!stream.resource<*>) {
    %c16 = arith.constant 16 : index
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @mm_f32::@mm_f32(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    util.return %r0 : !stream.resource<*>
  }
}

// -----

module @cpu_only {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  stream.executable private @mm_f32 {
    stream.executable.export public @mm_f32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @mm_f32(%in0: !stream.binding, %in1: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.0 : f32
        %0 = stream.binding.subspan %in0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>>
        %1 = stream.binding.subspan %in1[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>>
        %2 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x2048xf32>> -> tensor<32x2048xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [2048, 2048], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x2048xf32>> -> tensor<2048x2048xf32>
        %5 = tensor.empty() : tensor<32x2048xf32>
        %6 = linalg.fill ins(%zero : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        %7 = linalg.matmul ins(%3, %4 : tensor<32x2048xf32>, tensor<2048x2048xf32>) outs(%6 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
        iree_tensor_ext.dispatch.tensor.store %7, %2, offsets = [0, 0], sizes = [32, 2048], strides = [1, 1] : tensor<32x2048xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x2048xf32>>
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %w: !stream.resource<*>) -> (!stream.resource<*>) {
    %c16 = arith.constant 16 : index
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @mm_f32::@mm_f32(%x, %w) : (tensor<32x2048xf32> in !stream.resource<*>{%c16}, tensor<2048x2048xf32> in !stream.resource<*>{%c16}) -> tensor<32x2048xf32> in !stream.resource<*>{%c16}
    util.return %r0 : !stream.resource<*>
  }
}

// CHECK-LABEL: module @vulkan_and_cpu
// CHECK-NOT: compilation_info
// CHECK-LABEL: module @cpu_only
// CHECK-NOT: compilation_info
