// Regression, fixed (was: pass bug, residence.py/transfer_insertion.py): a transfer with no
// target whose consumers run on two devices. Residence.transfer_target gives
// None when the consumers disagree, so _rewrite_transfer skips it, and
// Residence.home of its result is None too, so _rewrite_implicit_crossings
// skips the consumer on device_b as well: the cuda op reads a local buffer.
// Expected: the consumer on device_b reads a staged copy from device_a; the
// consumer on device_a keeps reading the value on device_a.
// Got: both clones read the unstaged transfer result; no @__mdc_stage call.

// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion | FileCheck %s

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @consumers_on_two_devices(%v: f32) -> (!stream.resource<*>, !stream.resource<*>) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %t = stream.async.transfer %a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> !stream.resource<*>{%size}
    %on_a = stream.async.clone on(#hal.device.affinity<@device_a>) %t : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
    %on_b = stream.async.clone on(#hal.device.affinity<@device_b>) %t : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
    util.return %on_a, %on_b : !stream.resource<*>, !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @consumers_on_two_devices(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK:      %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %{{.+}} : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]]
// CHECK-NEXT: %[[ON_B:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I]]
// CHECK-NEXT: stream.async.clone on(#hal.device.affinity<@device_b>) %[[ON_B]]
// CHECK-NOT:  util.call @__mdc_stage
