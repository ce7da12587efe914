// Regression, fixed (was: pass bug, residence.py/transfer_insertion.py): found by the
// random program generator (test/e2e/progen.py). A matmul whose operands are
// arguments on different devices (crossing shape 3): a static one on device_b
// and a dynamic one on device_a; the result is returned on device_a (or on
// device_b: the same). mdc places the dispatch on device_b (more operand
// bytes) and stages the dynamic operand a -> b and the result b -> a, but the
// static operand keeps IREE's targetless `stream.async.transfer %x
// from(device_b) -> !stream.resource<*>`, which IREE then runs on the default
// device:
//   mixed_device_matmul_dynamic_operand.mlir:..: error: 'hal.device.queue.copy'
//   on device_a (local) uses a device-local buffer allocated by device_b
//   (local), memory device_a cannot access
// in both execution models and for --device=b=cuda[0]. An elementwise op on
// the same two arguments compiles; so does the matmul with static shapes, or
// with an explicit transfer of %x to device_a.
// Stock IREE (all-local) prints 2x2xf32=[4 5][12 13].
// Expected: compiles (the targetless transfer from device_b to a consumer on
// device_b is a no-op, or gets an explicit target) and prints the same.

// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --device=local-task --device=local-sync '--input=2x4xf32=[1 2 3 4][5 6 7 8]' '--input=4x2xf32=[1 0][0 1][1 1][0 0]' | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 2x2xf32=[4 5][12 13]

func.func public @matmul_across(
    %x: tensor<2x4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %y: tensor<4x?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<2x?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c1 = arith.constant 1 : index
  %d = tensor.dim %y, %c1 : tensor<4x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%d) : tensor<2x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x?xf32>) -> tensor<2x?xf32>
  %r = linalg.matmul ins(%x, %y : tensor<2x4xf32>, tensor<4x?xf32>) outs(%f : tensor<2x?xf32>) -> tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}
