// Explicit `stream.async.transfer from(A) -> to(B)` between a local CPU and a
// discrete GPU: the transfer becomes export on A (after a barrier whose
// timepoint, exported as A's fence, the first copy waits on), a call to a
// @__mdc_stage_* helper, import on B, cast back. The GPU owns the staging
// memory in both directions.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s
// A second run finds nothing left to stage: the same checks hold.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion,transfer-insertion --split-input-file | FileCheck %s
// Every transfer in this file is staged: none survives.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s --check-prefix=GONE
// GONE-NOT: stream.async.transfer

// local -> cuda.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @local_to_cuda(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @local_to_cuda(
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32>
// CHECK-NEXT: %[[SRC:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[EXT:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[SRC]] : !stream.resource<*>{%[[SIZE]]} -> !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[RES_VIEW:[^ ,]+]], %[[TP_VIEW:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[EXT]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_VIEW:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_VIEW]] => (!hal.fence)
// CHECK-NEXT: %[[VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_VIEW]] : tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]} -> !hal.buffer_view
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[STAGED:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[VIEW]], %[[READY_VIEW]], %[[A]], %[[B]], %[[OWNER]]) {mdc.staged} : (!hal.buffer_view, !hal.fence, !hal.device, !hal.device, !hal.device) -> !hal.buffer_view
// CHECK:      %[[IMP:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[STAGED]] : !hal.buffer_view -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[BACK:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[IMP]] : !stream.resource<external>{%[[SIZE]]} -> !stream.resource<*>{%[[SIZE]]}
// CHECK-NEXT: util.return %[[BACK]] : !stream.resource<*>
// One staging call per crossing.
// CHECK-NOT:  util.call @__mdc_stage
// The helper: pinned host memory (cached in a global per owner) from the
// owner's allocator; a buffer allocated on the destination's queue
// (stream-ordered, from the device's pool), asked for first so that it is
// ready by the time the copy into it is issued (a queue operation waiting
// on a fence not yet reached costs more on IREE 3.13's cuda); the first
// copy on the source queue waits for the value's own fence and signals a
// fence of the source device; the second runs on the destination's queue,
// after the allocation's fence; the host waits for both copies.
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_device_b(%[[SV:[a-z0-9_]+]]: !hal.buffer_view, %[[SR:[a-z0-9_]+]]: !hal.fence, %[[SD:[a-z0-9_]+]]: !hal.device, %[[DD:[a-z0-9_]+]]: !hal.device, %[[OD:[a-z0-9_]+]]: !hal.device) -> !hal.buffer_view
// CHECK:      %[[OA:.+]] = hal.device.allocator<%[[OD]] : !hal.device> : !hal.allocator
// CHECK-NEXT: hal.memory_type<"{{.*}}HostLocal|DeviceVisible">
// CHECK:      util.global.load @__mdc_stage_pinned_device_b : !hal.buffer
// CHECK:      hal.allocator.allocate<%[[OA]] : !hal.allocator>
// CHECK:      %[[AR:.+]] = hal.fence.create device(%[[DD]] : !hal.device)
// CHECK-NEXT: %[[DST:.+]] = hal.device.queue.alloca<%[[DD]] : !hal.device> affinity(%{{.+}}) wait(%{{.+}}) signal(%[[AR]])
// CHECK:      %[[F1:.+]] = hal.fence.create device(%[[SD]] : !hal.device)
// CHECK-NEXT: hal.device.queue.copy<%[[SD]] : !hal.device> affinity(%{{.+}}) wait(%[[SR]]) signal(%[[F1]])
// CHECK:      hal.fence.await
// CHECK:      %[[F2:.+]] = hal.fence.create device(%[[DD]] : !hal.device)
// CHECK-NEXT: hal.device.queue.copy<%[[DD]] : !hal.device> affinity(%{{.+}}) wait(%[[AR]]) signal(%[[F2]]) source(%{{.+}} : !hal.buffer)[%{{.+}}] target(%[[DST]] : !hal.buffer)
// CHECK-NEXT: hal.fence.await until([%[[F2]]])
// CHECK:      hal.buffer_view.create
// CHECK:      util.return

// -----

// cuda -> local: the owner is still the cuda device (now the source).
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @cuda_to_local(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<2x3xi32> : index
    %on_b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<2x3xi32> in !stream.resource<*>{%size}
    %on_a = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %on_a : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @cuda_to_local(
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<2x3xi32>
// CHECK-NEXT: %[[SRC:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[EXT:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[SRC]] : !stream.resource<*>{%[[SIZE]]} -> !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[RES_VIEW:[^ ,]+]], %[[TP_VIEW:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[EXT]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_VIEW:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_VIEW]] => (!hal.fence)
// CHECK-NEXT: %[[VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_VIEW]] : tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]} -> !hal.buffer_view
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[STAGED:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[VIEW]], %[[READY_VIEW]], %[[B]], %[[A]], %[[OWNER]])
// CHECK:      %[[IMP:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[STAGED]] : !hal.buffer_view -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[BACK:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[IMP]] : !stream.resource<external>{%[[SIZE]]} -> !stream.resource<*>{%[[SIZE]]}
// CHECK-NEXT: util.return %[[BACK]] : !stream.resource<*>
// CHECK:      util.func private @__mdc_stage_gpu_to_local_via_device_b(

// -----

// A round trip local -> cuda -> local in one function, with an external
// resource moved as-is (no cast to external before the export, none back
// after the import), and a hip GPU rather than cuda. The hip device owns the
// staging memory both ways: one helper per direction, one pinned buffer.
module attributes {stream.affinity.default = #hal.device.affinity<@cpu>} {
  util.global private @cpu = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @round_trip_hip(%arg0: !hal.buffer_view) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<16xf16> : index
    %x = stream.tensor.import on(#hal.device.affinity<@cpu>) %arg0 : !hal.buffer_view -> tensor<16xf16> in !stream.resource<external>{%size}
    %on_gpu = stream.async.transfer %x : !stream.resource<external>{%size} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>) !stream.resource<external>{%size}
    %back = stream.async.transfer %on_gpu : !stream.resource<external>{%size} from(#hal.device.affinity<@gpu>) -> to(#hal.device.affinity<@cpu>) !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@cpu>) %back : tensor<16xf16> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.func public @round_trip_hip(
// CHECK:      %[[X:.+]] = stream.tensor.import on(#hal.device.affinity<@cpu>) %{{.+}} : !hal.buffer_view -> tensor<16xf16>
// CHECK-NEXT: %[[RES_V1:[^ ,]+]], %[[TP_V1:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@cpu>) %[[X]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V1:.+]] = stream.timepoint.export on(#hal.device.affinity<@cpu>) %[[TP_V1]] => (!hal.fence)
// CHECK-NEXT: %[[V1:.+]] = stream.tensor.export on(#hal.device.affinity<@cpu>) %[[RES_V1]] : tensor<?xi8>
// CHECK-DAG:  %[[CPU1:.+]] = util.global.load immutable @cpu : !hal.device
// CHECK-DAG:  %[[GPU1:.+]] = util.global.load immutable @gpu : !hal.device
// CHECK-DAG:  %[[OWN1:.+]] = util.global.load immutable @gpu : !hal.device
// CHECK:      %[[S1:.+]] = util.call @__mdc_stage_local_to_gpu_via_gpu(%[[V1]], %[[READY_V1]], %[[CPU1]], %[[GPU1]], %[[OWN1]])
// CHECK:      %[[ON_GPU:.+]] = stream.tensor.import on(#hal.device.affinity<@gpu>) %[[S1]] : !hal.buffer_view -> tensor<?xi8>
// CHECK-NEXT: %[[RES_V2:[^ ,]+]], %[[TP_V2:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@gpu>) %[[ON_GPU]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V2:.+]] = stream.timepoint.export on(#hal.device.affinity<@gpu>) %[[TP_V2]] => (!hal.fence)
// CHECK-NEXT: %[[V2:.+]] = stream.tensor.export on(#hal.device.affinity<@gpu>) %[[RES_V2]] : tensor<?xi8>
// CHECK-DAG:  %[[GPU2:.+]] = util.global.load immutable @gpu : !hal.device
// CHECK-DAG:  %[[CPU2:.+]] = util.global.load immutable @cpu : !hal.device
// CHECK-DAG:  %[[OWN2:.+]] = util.global.load immutable @gpu : !hal.device
// CHECK:      %[[S2:.+]] = util.call @__mdc_stage_gpu_to_local_via_gpu(%[[V2]], %[[READY_V2]], %[[GPU2]], %[[CPU2]], %[[OWN2]])
// CHECK:      %[[BACK:.+]] = stream.tensor.import on(#hal.device.affinity<@cpu>) %[[S2]] : !hal.buffer_view -> tensor<?xi8>
// CHECK-NEXT: %[[OUT:.+]] = stream.tensor.export on(#hal.device.affinity<@cpu>) %[[BACK]] : tensor<16xf16>
// CHECK-NEXT: util.return %[[OUT]]
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_gpu(
// CHECK:      util.global.load @__mdc_stage_pinned_gpu : !hal.buffer
// CHECK:      util.func private @__mdc_stage_gpu_to_local_via_gpu(
// CHECK:      util.global.load @__mdc_stage_pinned_gpu : !hal.buffer
// CHECK-NOT:  __mdc_stage_pinned_cpu
// CHECK-NOT:  util.func private @__mdc_stage

// -----

// The module already has a function and a global with the names the helper
// and its pinned buffer would get: both get fresh names, the user's symbols
// are left alone.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @__mdc_stage_pinned_device_b : index
  util.func private @__mdc_stage_local_to_gpu_via_device_b(%x: index) -> index {
    util.return %x : index
  }
  util.func public @name_clash(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
}
// CHECK:      util.global private mutable @__mdc_stage_pinned_device_b_1 : !hal.buffer
// CHECK:      util.global private @__mdc_stage_pinned_device_b : index
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_device_b(%{{.+}}: index) -> index
// CHECK-LABEL: util.func public @name_clash(
// CHECK:      util.call @__mdc_stage_local_to_gpu_via_device_b_1(
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_device_b_1(%{{.+}}: !hal.buffer_view, %{{.+}}: !hal.fence, %{{.+}}: !hal.device, %{{.+}}: !hal.device, %{{.+}}: !hal.device) -> !hal.buffer_view
// CHECK:      util.global.load @__mdc_stage_pinned_device_b_1 : !hal.buffer

// -----

// A transfer IREE labelled with the wrong source: its value is made on
// device_b, but `from` names device_a (IREE does this when it folds a
// reshape on device_a into the producer on device_b; random programs, seed
// 796039204 index 38). The producer's device wins: the move is staged
// b -> a, not left as a move within device_a.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @mislabelled_source(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %on_b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_a = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %on_a : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @mislabelled_source(
// CHECK:      stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK:      stream.tensor.export on(#hal.device.affinity<@device_b>)
// CHECK:      util.call @__mdc_stage_gpu_to_local_via_device_b(
// CHECK:      stream.tensor.import on(#hal.device.affinity<@device_a>)
