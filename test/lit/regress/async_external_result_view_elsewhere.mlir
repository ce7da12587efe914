// Regression, fixed (was: pass bug, transfer_insertion.py/host_fences.py): found by the
// random program generator (test/e2e/progen.py). With
// --iree-execution-model=async-external, a result declared on device_b that
// is only a reshape of an argument on device_a (no dispatch: the crossing is
// ABI shape 2 on an imported buffer) fails to compile:
//   async_external_result_view_elsewhere.mlir:..: error:
//   'hal.device.queue.copy' on device_a (local) uses a device-local buffer
//   allocated by device_b (local), memory device_a cannot access
// It fails the same way for --device=b=cuda[0] (no --link). async-internal
// compiles, and so does async-external when the result is computed
// (arith.addf) instead of reshaped. (A reduction over a unit dimension,
// which IREE turns into a copy, does the same as the collapse.)
// Expected: compiles for both models and for cuda; mdc-run prints the input.

// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --iree-execution-model=async-external -o %t/ext.vmfb
// RUN: mdc-run --module=%t/ext.vmfb --device=local-task --device=local-sync --input=1x4xf32=1,2,3,4 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --iree-execution-model=async-external -o %t/cuda.vmfb
// CHECK: 4xf32=1 2 3 4

func.func public @collapse_to_b(
    %x: tensor<1x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %r = tensor.collapse_shape %x [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
  return %r : tensor<4xf32>
}
