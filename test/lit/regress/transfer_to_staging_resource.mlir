// Regression, fixed (was: pass bug, transfer_insertion.py): a cross-device transfer whose
// result is a `!stream.resource<staging>` (what a host read of a value needs;
// valid stream IR). _Stager.stage casts the imported external resource back
// to the result type with stream.async.cast, which does not accept staging,
// and mdc-opt fails with "passes produced invalid IR: ... 'stream.async.cast'
// op result #0 must be resource or external ... but got
// '!stream.resource<staging>'".
// Expected: valid IR, exit 0; the value is staged cuda -> local and then made
// a staging resource on device_a (e.g. a same-device transfer to staging,
// which IREE handles), and the stream.tensor.load reads that.

// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion | FileCheck %s

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @read_gpu_value_on_host(%v: i32) -> i32 {
    %c0 = arith.constant 0 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xi32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : i32 -> tensor<4xi32> in !stream.resource<*>{%size}
    %st = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<staging>{%size}
    %e = stream.tensor.load %st[%c0] : tensor<4xi32> in !stream.resource<staging>{%size} -> i32
    util.return %e : i32
  }
}
// CHECK-LABEL: util.func public @read_gpu_value_on_host(
// CHECK:      %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %{{.+}} : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V]], %[[READY_V]], %[[B]], %[[A]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]]
// CHECK:      %[[ST:.+]] = {{.*}}!stream.resource<staging>
// CHECK-NEXT: stream.tensor.load %[[ST]][
