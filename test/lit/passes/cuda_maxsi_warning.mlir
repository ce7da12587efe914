// warn-cuda-maxsi-reduction: an i32 maxsi reduction from INT_MIN of a
// dynamically shaped input (over its middle or its last dimension), in an
// executable dispatched on a cuda device, gets one warning at its source
// location (IREE 3.13's CUDA code gives 0 where the maximum is negative;
// test/e2e/gpu_kit.py's stock canary). Nothing else warns, and the IR is
// never changed.
// RUN: mdc-opt %s --pass=warn-cuda-maxsi-reduction --split-input-file -o /dev/null 2>&1 | FileCheck %s
// RUN: mdc-opt %s --split-input-file > %t.none
// RUN: mdc-opt %s --pass=warn-cuda-maxsi-reduction --split-input-file 2>/dev/null > %t.pass
// RUN: diff %t.none %t.pass
// The pattern on the GPU, dispatched twice there and once on the CPU: one
// warning, at the linalg.generic, naming the device.
// CHECK: cuda_maxsi_warning.mlir:[[# @LINE + 18]]:14: warning: linalg.generic on cuda device 'device_b': an i32 maxsi reduction from INT_MIN of a dynamic shape
module @on_cuda {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @maxsi {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%in: !stream.binding, %d1: index, %d2: index, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %init = arith.constant -2147483648 : i32
        %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2}
        %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, %d1, %d2], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2} -> tensor<4x?x?xi32>
        %3 = tensor.empty(%d2) : tensor<4x?xi32>
        %4 = linalg.fill ins(%init : i32) outs(%3 : tensor<4x?xi32>) -> tensor<4x?xi32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<4x?x?xi32>) outs(%4 : tensor<4x?xi32>) {
        ^bb0(%a: i32, %acc: i32):
          %6 = arith.maxsi %a, %acc : i32
          linalg.yield %6 : i32
        } -> tensor<4x?xi32>
        iree_tensor_ext.dispatch.tensor.store %5, %1, offsets = [0, 0], sizes = [4, %d2], strides = [1, 1] : tensor<4x?xi32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %d1: index, %d2: index, %n: index) -> (!stream.resource<*>, !stream.resource<*>, !stream.resource<*>) {
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @maxsi::@entry(%x, %d1, %d2) : (tensor<4x?x?xi32>{%d1, %d2} in !stream.resource<*>{%n}, index, index) -> tensor<4x?xi32>{%d2} in !stream.resource<*>{%n}
    %r1 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @maxsi::@entry(%x, %d1, %d2) : (tensor<4x?x?xi32>{%d1, %d2} in !stream.resource<*>{%n}, index, index) -> tensor<4x?xi32>{%d2} in !stream.resource<*>{%n}
    %r2 = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @maxsi::@entry(%x, %d1, %d2) : (tensor<4x?x?xi32>{%d1, %d2} in !stream.resource<*>{%n}, index, index) -> tensor<4x?xi32>{%d2} in !stream.resource<*>{%n}
    util.return %r0, %r1, %r2 : !stream.resource<*>, !stream.resource<*>, !stream.resource<*>
  }
}

// -----

// The same on the CPU only: no warning.
module @on_local {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @maxsi {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%in: !stream.binding, %d1: index, %d2: index, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %init = arith.constant -2147483648 : i32
        %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2}
        %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, %d1, %d2], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2} -> tensor<4x?x?xi32>
        %3 = tensor.empty(%d2) : tensor<4x?xi32>
        %4 = linalg.fill ins(%init : i32) outs(%3 : tensor<4x?xi32>) -> tensor<4x?xi32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<4x?x?xi32>) outs(%4 : tensor<4x?xi32>) {
        ^bb0(%a: i32, %acc: i32):
          %6 = arith.maxsi %a, %acc : i32
          linalg.yield %6 : i32
        } -> tensor<4x?xi32>
        iree_tensor_ext.dispatch.tensor.store %5, %1, offsets = [0, 0], sizes = [4, %d2], strides = [1, 1] : tensor<4x?xi32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %d1: index, %d2: index, %n: index) -> (!stream.resource<*>) {
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @maxsi::@entry(%x, %d1, %d2) : (tensor<4x?x?xi32>{%d1, %d2} in !stream.resource<*>{%n}, index, index) -> tensor<4x?xi32>{%d2} in !stream.resource<*>{%n}
    util.return %r0 : !stream.resource<*>
  }
}

// -----

// An addi reduction on the GPU (from INT_MIN, so only the combiner differs):
// no warning.
module @addi {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @sum {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%in: !stream.binding, %d1: index, %d2: index, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %init = arith.constant -2147483648 : i32
        %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2}
        %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, %d1, %d2], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2} -> tensor<4x?x?xi32>
        %3 = tensor.empty(%d2) : tensor<4x?xi32>
        %4 = linalg.fill ins(%init : i32) outs(%3 : tensor<4x?xi32>) -> tensor<4x?xi32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<4x?x?xi32>) outs(%4 : tensor<4x?xi32>) {
        ^bb0(%a: i32, %acc: i32):
          %6 = arith.addi %a, %acc : i32
          linalg.yield %6 : i32
        } -> tensor<4x?xi32>
        iree_tensor_ext.dispatch.tensor.store %5, %1, offsets = [0, 0], sizes = [4, %d2], strides = [1, 1] : tensor<4x?xi32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %d1: index, %d2: index, %n: index) -> (!stream.resource<*>) {
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @sum::@entry(%x, %d1, %d2) : (tensor<4x?x?xi32>{%d1, %d2} in !stream.resource<*>{%n}, index, index) -> tensor<4x?xi32>{%d2} in !stream.resource<*>{%n}
    util.return %r0 : !stream.resource<*>
  }
}

// -----

// maxsi from 0, not INT_MIN: no warning (not measured).
module @init_zero {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @maxsi {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%in: !stream.binding, %d1: index, %d2: index, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %init = arith.constant 0 : i32
        %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2}
        %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, %d1, %d2], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2} -> tensor<4x?x?xi32>
        %3 = tensor.empty(%d2) : tensor<4x?xi32>
        %4 = linalg.fill ins(%init : i32) outs(%3 : tensor<4x?xi32>) -> tensor<4x?xi32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<4x?x?xi32>) outs(%4 : tensor<4x?xi32>) {
        ^bb0(%a: i32, %acc: i32):
          %6 = arith.maxsi %a, %acc : i32
          linalg.yield %6 : i32
        } -> tensor<4x?xi32>
        iree_tensor_ext.dispatch.tensor.store %5, %1, offsets = [0, 0], sizes = [4, %d2], strides = [1, 1] : tensor<4x?xi32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %d1: index, %d2: index, %n: index) -> (!stream.resource<*>) {
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @maxsi::@entry(%x, %d1, %d2) : (tensor<4x?x?xi32>{%d1, %d2} in !stream.resource<*>{%n}, index, index) -> tensor<4x?xi32>{%d2} in !stream.resource<*>{%n}
    util.return %r0 : !stream.resource<*>
  }
}

// -----

// maxsi from INT_MIN over the innermost dimension: warned too (the H200 gave
// 0 for negative maxima here as well).
// CHECK-NEXT: cuda_maxsi_warning.mlir:[[# @LINE + 19]]:14: warning: linalg.generic on cuda device 'device_b': an i32 maxsi reduction from INT_MIN of a dynamic shape
// CHECK-NOT: warning
module @innermost {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @maxsi {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%in: !stream.binding, %d1: index, %d2: index, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %init = arith.constant -2147483648 : i32
        %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2}
        %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, %d1, %d2], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?x?xi32>>{%d1, %d2} -> tensor<4x?x?xi32>
        %3 = tensor.empty(%d2) : tensor<4x?xi32>
        %4 = linalg.fill ins(%init : i32) outs(%3 : tensor<4x?xi32>) -> tensor<4x?xi32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<4x?x?xi32>) outs(%4 : tensor<4x?xi32>) {
        ^bb0(%a: i32, %acc: i32):
          %6 = arith.maxsi %a, %acc : i32
          linalg.yield %6 : i32
        } -> tensor<4x?xi32>
        iree_tensor_ext.dispatch.tensor.store %5, %1, offsets = [0, 0], sizes = [4, %d2], strides = [1, 1] : tensor<4x?xi32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x?xi32>>{%d2}
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %d1: index, %d2: index, %n: index) -> (!stream.resource<*>) {
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @maxsi::@entry(%x, %d1, %d2) : (tensor<4x?x?xi32>{%d1, %d2} in !stream.resource<*>{%n}, index, index) -> tensor<4x?xi32>{%d2} in !stream.resource<*>{%n}
    util.return %r0 : !stream.resource<*>
  }
}

// -----

// Static shapes: no warning (not measured).
module @static {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @maxsi {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%in: !stream.binding, %d1: index, %d2: index, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %init = arith.constant -2147483648 : i32
        %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x3x3xi32>>
        %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x3xi32>>
        %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, 3, 3], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x3x3xi32>> -> tensor<4x3x3xi32>
        %3 = tensor.empty() : tensor<4x3xi32>
        %4 = linalg.fill ins(%init : i32) outs(%3 : tensor<4x3xi32>) -> tensor<4x3xi32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<4x3x3xi32>) outs(%4 : tensor<4x3xi32>) {
        ^bb0(%a: i32, %acc: i32):
          %6 = arith.maxsi %a, %acc : i32
          linalg.yield %6 : i32
        } -> tensor<4x3xi32>
        iree_tensor_ext.dispatch.tensor.store %5, %1, offsets = [0, 0], sizes = [4, 3], strides = [1, 1] : tensor<4x3xi32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x3xi32>>
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %d1: index, %d2: index, %n: index) -> (!stream.resource<*>) {
    %r0 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @maxsi::@entry(%x, %d1, %d2) : (tensor<4x3x3xi32> in !stream.resource<*>{%n}, index, index) -> tensor<4x3xi32> in !stream.resource<*>{%n}
    util.return %r0 : !stream.resource<*>
  }
}
