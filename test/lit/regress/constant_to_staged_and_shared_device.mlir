// Regression, fixed on branch i32-silent (issue 32, found by the corpus of
// programs in other authors' shapes, test/e2e/programs/external/
// constant_on_two_devices.mlir): one constant moved by transfers to
// device_b (Vulkan, staged through pinned memory) and to device_c (a second
// CPU, sharing device_a's memory). mdc stages the copy to device_b on the
// host: it waits for the constant (a stream.timepoint.barrier), copies it
// into pinned memory in pieces whose fences it puts in a list, and hands the
// list to the call that waits for them. IREE's partitioner puts a transfer
// into its source producer's execution region across any host code, so the
// constant's clone ran with the late transfer to device_c, and the staging's
// copy (with the fill of the list) moved after it: the GPU read the pinned
// memory unwritten (device_b's product was 0, no error; lavapipe). The
// partition-fence pass now has such a transfer read the barrier's result.
// Numerics on lavapipe: test/e2e/test_external_shapes.py
// (constant_on_two_devices-dev_b).
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] --device=c=local[1] --compile-to=stream -o - | FileCheck %s
// CHECK-LABEL: util.func public @constant_twice(
// CHECK:       util.call @__mdc_stage_piece_onto_or_in_place(
// CHECK:       util.list.set
// CHECK:       util.call @__mdc_stage_pieces_arrived_or_in_place(
// The verifier refuses the module it was (its rule list-order, passes/verifier/module_rules.py;
// test/lit/verifier/list_order.mlir).

func.func public @constant_twice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %k = arith.constant dense<[0.5, -2.0, 8.0]> : tensor<3xf32>
  %kb = flow.tensor.transfer %k : tensor<3xf32> to #hal.device.promise<@device_b>
  %kc = flow.tensor.transfer %k : tensor<3xf32> to #hal.device.promise<@device_c>
  %xb = flow.tensor.transfer %x : tensor<3xf32> to #hal.device.promise<@device_b>
  %xc = flow.tensor.transfer %x : tensor<3xf32> to #hal.device.promise<@device_c>
  %pb = arith.mulf %xb, %kb : tensor<3xf32>
  %pc = arith.addf %xc, %kc : tensor<3xf32>
  %ab = flow.tensor.transfer %pb : tensor<3xf32> to #hal.device.promise<@device_a>
  %ac = flow.tensor.transfer %pc : tensor<3xf32> to #hal.device.promise<@device_a>
  %r = arith.subf %ab, %ac : tensor<3xf32>
  return %r : tensor<3xf32>
}
