// Regression, fixed (was: pass bug, residence.py): the block argument of scf.while's `do`
// region is an iteration value too, but Residence._block_arg_home only
// follows the `before` region's arguments. A value living on device_b read on
// device_a in the `do` region is not staged; the local queue would be handed
// a CUDA buffer.
// Expected: the clone on device_a reads a staged copy (export on device_b,
// @__mdc_stage(view, device_b, device_a, owner device_b), import on device_a).
// Got: `stream.async.clone on(device_a) %arg1` straight on the device_b value.

// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion | FileCheck %s

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @while_do_region_arg(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.while (%arg = %init) : (!stream.resource<*>) -> !stream.resource<*> {
      %cond = arith.constant true
      scf.condition(%cond) %arg : !stream.resource<*>
    } do {
    ^bb0(%body_arg: !stream.resource<*>):
      %c = stream.async.clone on(#hal.device.affinity<@device_a>) %body_arg : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      %back = stream.async.transfer %c : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
      scf.yield %back : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @while_do_region_arg(
// CHECK:      } do {
// CHECK-NEXT: ^bb0(%[[BODY:.+]]: !stream.resource<*>):
// CHECK:      %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %{{.+}} : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V]], %[[READY_V]], %[[B]], %[[A]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]]
// CHECK-NEXT: %[[ON_A:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I]]
// CHECK-NEXT: stream.async.clone on(#hal.device.affinity<@device_a>) %[[ON_A]]
