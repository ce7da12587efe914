// Regression: a mutable global stored from two devices (device_a in the
// initializer, device_b in a function). The global's home was whichever
// store came last, so a read on device_a was staged from device_b while the
// global could still hold a local buffer.

// RUN: (mdc-opt %s --staging=copy --pass=transfer-insertion 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private mutable @state : !stream.resource<variable>
  util.initializer {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %c = arith.constant 1.0 : f32
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %c : f32 -> tensor<4xf32> in !stream.resource<variable>{%size}
    util.global.store %x, @state : !stream.resource<variable>
    util.return
  }
  util.func public @write_on_b(%v: f32) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<variable>{%size}
    util.global.store %x, @state : !stream.resource<variable>
    util.return
  }
  util.func public @read_on_a(%size: index) -> !stream.resource<*> {
    %s = util.global.load @state : !stream.resource<variable>
    %c = stream.async.clone on(#hal.device.affinity<@device_a>) %s : !stream.resource<variable>{%size} -> !stream.resource<*>{%size}
    util.return %c : !stream.resource<*>
  }
}
// The global lives where its first value was stored (device_a); the store
// from device_b is staged there first, and the read on device_a needs none.
// CHECK: util.initializer
// CHECK-NOT: util.call @__mdc_stage
// CHECK: util.global.store %{{.+}}, @state
// CHECK-LABEL: util.func public @write_on_b(
// CHECK: stream.tensor.export on(#hal.device.affinity<@device_b>)
// CHECK: %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(
// CHECK: %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]]
// CHECK: %[[V:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I]] {{.*}} -> !stream.resource<variable>
// CHECK: util.global.store %[[V]], @state
// CHECK-LABEL: util.func public @read_on_a(
// CHECK-NOT: util.call @__mdc_stage
// CHECK: stream.async.clone on(#hal.device.affinity<@device_a>)
// CHECK: rc=0
