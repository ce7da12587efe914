// Regression, fixed (was: pass bug, transfer_insertion.py/residence.py): found by the
// random program generator (test/e2e/progen.py). A constant tensor moved to
// device_b with flow.tensor.transfer and used there (crossing shape 4):
//   transferred_constant.mlir:..: error: 'hal.device.queue.dealloca' on
//   device_a (local) uses a device-local buffer allocated by device_b (local),
//   memory device_a cannot access
// in both execution models, and with --device=b=cuda[0] as well. Stock IREE
// (all-local) prints 4xf32=1 2 3 4 and 4xf32=2 4 6 8. (With IREE's default
// --iree-opt-const-eval=true, IREE 3.13.0 itself segfaults on this program,
// stock iree-compile too; mdc reports that, so the test turns const-eval off.)
// A constant used on device_b without a transfer (folded into the dispatch)
// works.
// Expected: compiles; the constant is staged (or materialised on device_b).

// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --iree-opt-const-eval=false -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --iree-opt-const-eval=false --iree-execution-model=async-external -o %t/ext.vmfb
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --iree-opt-const-eval=false -o %t/cuda.vmfb
// CHECK: 4xf32=1 2 3 4
// CHECK: 4xf32=2 4 6 8

func.func public @constant_to_b(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %k = arith.constant dense<[-1.0, 2.0, -3.0, 4.0]> : tensor<4xf32>
  %kb = flow.tensor.transfer %k : tensor<4xf32> to #hal.device.promise<@device_b>
  %r = math.absf %kb : tensor<4xf32>
  %y = arith.addf %x, %x : tensor<4xf32>
  return %r, %y : tensor<4xf32>, tensor<4xf32>
}
