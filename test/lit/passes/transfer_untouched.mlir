// Pairs that share memory are left to IREE: two local devices, two devices of
// one GPU driver. The transfer stays exactly as it was and no helper is added.
// (One exception, last below: a transfer within one device that IREE labelled
// with another device as its source gets its real source.)
// RUN: mdc-opt %s --pass=transfer-insertion --split-input-file | FileCheck %s
// Nothing is staged anywhere in this file.
// RUN: mdc-opt %s --pass=transfer-insertion --split-input-file | FileCheck %s --check-prefix=NONE
// NONE-NOT: __mdc_stage
// NONE-NOT: tensor<?xi8>

// local + local.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @local_local(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %back = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %back : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @local_local(
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof
// CHECK-NEXT: %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[Y:.+]] = stream.async.transfer %[[X]] : !stream.resource<*>{%[[SIZE]]} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%[[SIZE]]}
// CHECK-NEXT: %[[Z:.+]] = stream.async.transfer %[[Y]] : !stream.resource<*>{%[[SIZE]]} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%[[SIZE]]}
// CHECK-NEXT: util.return %[[Z]]
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// cuda + cuda: two instances of one driver.
module attributes {stream.affinity.default = #hal.device.affinity<@gpu0>} {
  util.global private @gpu0 = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu1 = #hal.device.target<"cuda", {ordinal = 1 : index}> : !hal.device
  util.func public @cuda_cuda(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@gpu0>) tensor<4xf32> : index
    %on_0 = stream.tensor.splat on(#hal.device.affinity<@gpu0>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_1 = stream.async.transfer %on_0 : !stream.resource<*>{%size} from(#hal.device.affinity<@gpu0>) -> to(#hal.device.affinity<@gpu1>) !stream.resource<*>{%size}
    util.return %on_1 : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @cuda_cuda(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@gpu0>)
// CHECK-NEXT: %[[Y:.+]] = stream.async.transfer %[[X]] : !stream.resource<*>{%{{.+}}} from(#hal.device.affinity<@gpu0>) -> to(#hal.device.affinity<@gpu1>)
// CHECK-NEXT: util.return %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// hip + hip, and an implicit use on the other device (an ABI result declared
// on gpu1 but computed on gpu0): also left to IREE.
module attributes {stream.affinity.default = #hal.device.affinity<@gpu0>} {
  util.global private @gpu0 = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu1 = #hal.device.target<"hip", {ordinal = 1 : index}> : !hal.device
  util.func public @hip_hip_implicit(%v: f32) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@gpu0>) tensor<4xf32> : index
    %on_0 = stream.tensor.splat on(#hal.device.affinity<@gpu0>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %ext = stream.async.cast on(#hal.device.affinity<@gpu1>) %on_0 : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@gpu1>) %ext : tensor<4xf32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.func public @hip_hip_implicit(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@gpu0>)
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@gpu1>) %[[X]] : !stream.resource<*>{%{{.+}}} -> !stream.resource<external>
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@gpu1>) %[[E]] : tensor<4xf32>
// CHECK-NEXT: util.return %[[V]]
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// A single local device (no pair at all).
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.func public @single_device(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %y = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %y : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @single_device(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[Y:.+]] = stream.async.transfer %[[X]] : !stream.resource<*>{%{{.+}}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_a>)
// CHECK-NEXT: util.return %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// A move within device_a that IREE labelled `from(device_b)`, in a module
// with a staged pair: its value is made on device_a, so nothing is staged,
// and the label is corrected to device_a (left wrong, IREE allocates the
// value for both devices; random programs, seed 796039204 index 92).
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @mislabelled_within_a(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %moved = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %moved : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @mislabelled_within_a(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[Y:.+]] = stream.async.transfer %[[X]] : !stream.resource<*>{%{{.+}}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_a>)
// CHECK-NEXT: util.return %[[Y]]
