// Regression, fixed (was: pass bug, residence.py/transfer_insertion.py): found by the random
// program generator (test/e2e/progen.py). An scf.for whose carried value
// moves to device_b in the body and is yielded from there: it lives on
// device_a before the first iteration and on device_b after each one, and
// the loop result is returned on device_a. Stock IREE compiles and runs it
// (all-local: 4xf32=1 2 3 4 for -1,2,-3,4 and 3 trips); mdc-compile fails:
//   loop_carried_value_changes_device.mlir:..: error: 'hal.allocator.select'
//   makes one allocation serve device_a (local) and device_b (local), which
//   do not share memory
//   note: ... 'hal.device.queue.execute.indirect' on device_b (local) uses a
//   device-local buffer allocated by device_a (local) ...
// The same with --device=b=cuda[0] (no --link) fails the same way.
// Expected: the value is staged where its device changes (into the loop on
// the first iteration, around the back edge, or out of the loop), the vmfb
// runs on local-task + local-sync, and a cuda build compiles.

// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: iree-run-module --module=%t/staged.vmfb --device=local-task --device=local-sync --input=4xf32=-1,2,-3,4 --input=3 | FileCheck %s
// RUN: iree-run-module --module=%t/staged.vmfb --device=local-task --device=local-sync --input=4xf32=-1,2,-3,4 --input=0 | FileCheck %s --check-prefix=ZERO
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 4xf32=1 2 3 4
// ZERO: 4xf32=-1 2 -3 4

func.func public @abs_on_b(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %n: index
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xf32>) {
    %b = flow.tensor.transfer %acc : tensor<4xf32> to #hal.device.promise<@device_b>
    %s = math.absf %b : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
