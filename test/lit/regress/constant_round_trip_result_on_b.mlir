// Fixed (transfer_insertion.py): found by the
// random program generator (test/e2e/progen.py, seed 3 index 22, minimised).
// A constant is moved to device_b and used there; the moved value also goes
// back to device_a and is returned declared on device_b, and the sum
// computed on device_b is returned declared on device_a:
//   constant_round_trip_result_on_b.mlir:..: error: 'hal.allocator.select'
//   makes one allocation serve device_a (local) and device_b (local), which
//   do not share memory
//   (then: 'hal.device.queue.read' on device_a ... allocated by device_b, ...)
// in both execution models, with and without const-eval, and for
// --device=b=cuda[0]. Returning %kb itself (no transfer back) compiles.
// Stock IREE (all-local) prints 4xf32=11 22 33 44 and 4xf32=1 2 3 4.
// Cause: the move back became a transfer a -> a with no source affinity
// (IREE folded the two transfers); IREE scheduled its copy in device_b's
// partition and allocated the result for both devices. The pass now gives
// every unstaged transfer its source affinity as well as its target.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --device=local-task --device=local-sync --input=4xf32=10,20,30,40 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 4xf32=11 22 33 44
// CHECK: 4xf32=1 2 3 4

func.func public @constant_there_and_back(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %k = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %kb = flow.tensor.transfer %k : tensor<4xf32> to #hal.device.promise<@device_b>
  %y = arith.addf %x, %kb : tensor<4xf32>
  %ka = flow.tensor.transfer %kb : tensor<4xf32> to #hal.device.promise<@device_a>
  return %y, %ka : tensor<4xf32>, tensor<4xf32>
}
