// host-fences: in modules with a staged device pair the caller's wait and
// signal fences (async-external) are awaited and signalled on the host, never
// handed to a device queue. Modules whose pairs all share memory keep IREE's
// behaviour.
// RUN: mdc-opt %s --pass=host-fences --split-input-file | FileCheck %s
// The forced link turns the local-only input below into a staged one.
// RUN: mdc-opt %S/Inputs/async_external_local_pair.mlir --pass=host-fences --link=a:b=staged | FileCheck %s --check-prefix=FORCED
// RUN: mdc-opt %S/Inputs/async_external_local_pair.mlir --pass=host-fences | FileCheck %s --check-prefix=LOCAL
// Both passes in pipeline order on the shape IREE gives a result declared on
// the GPU and computed on the CPU: the barrier on the GPU reads a staged copy,
// the caller's fences are handled on the host.
// RUN: mdc-opt %S/Inputs/async_external_result_on_gpu.mlir --staging=copy --pass=transfer-insertion,host-fences | FileCheck %s --check-prefix=BOTH
// Running host-fences twice changes nothing more.
// RUN: mdc-opt %S/Inputs/async_external_result_on_gpu.mlir --staging=copy --pass=transfer-insertion,host-fences,host-fences | FileCheck %s --check-prefix=BOTH

// local + cuda: both fences move to the host.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @async_external(%arg0: !hal.buffer_view, %wait: !hal.fence, %signal: !hal.fence) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<8xi32> : index
    %x = stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0 : !hal.buffer_view -> tensor<8xi32> in !stream.resource<external>{%size}
    %ready = stream.timepoint.import on(#hal.device.affinity<@device_b>) %wait : (!hal.fence) => !stream.timepoint
    %x_ready = stream.timepoint.await %ready => %x : !stream.resource<external>{%size}
    %y = stream.async.cast on(#hal.device.affinity<@device_b>) %x_ready : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
    %result, %done = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %y : !stream.resource<*>{%size} => !stream.timepoint
    stream.timepoint.chain_external on(#hal.device.affinity<@device_b>) %done => (%signal : !hal.fence)
    %ext = stream.async.cast on(#hal.device.affinity<@device_b>) %result : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@device_b>) %ext : tensor<8xi32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
  // The signalled timepoint is not a barrier's: the device's own fence is
  // exported and relayed to the caller's on the host.
  util.func public @chain_of_join(%wait: !hal.fence, %signal: !hal.fence) {
    %t0 = stream.timepoint.immediate => !stream.timepoint
    %t1 = stream.timepoint.immediate => !stream.timepoint
    %j = stream.timepoint.join max(%t0, %t1) => !stream.timepoint
    stream.timepoint.chain_external on(#hal.device.affinity<@device_b>) %j => (%signal : !hal.fence)
    util.return
  }
  // A fence the program makes itself is not the caller's: left alone.
  util.func public @own_fence() -> !stream.timepoint {
    %dev = util.global.load immutable @device_a : !hal.device
    %f = hal.fence.create device(%dev : !hal.device) flags("None") : !hal.fence
    %t = stream.timepoint.import on(#hal.device.affinity<@device_a>) %f : (!hal.fence) => !stream.timepoint
    util.return %t : !stream.timepoint
  }
}
// CHECK-LABEL: util.func public @async_external(
// CHECK-SAME: %[[ARG:[a-z0-9_]+]]: !hal.buffer_view, %[[WAIT:[a-z0-9_]+]]: !hal.fence, %[[SIGNAL:[a-z0-9_]+]]: !hal.fence
// CHECK-NOT:  stream.timepoint.import
// CHECK:      %[[X:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[ARG]]
// CHECK-NEXT: util.call @__mdc_host_await(%[[WAIT]]) : (!hal.fence) -> ()
// CHECK-NEXT: %[[NOW:.+]] = stream.timepoint.immediate => !stream.timepoint
// CHECK-NEXT: %[[XR:.+]] = stream.timepoint.await %[[NOW]] => %[[X]] : !stream.resource<external>
// CHECK-NEXT: %[[Y:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[XR]]
// CHECK-NEXT: %[[RES:.+]], %[[DONE:.+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[Y]]
// CHECK-NEXT: %[[AWAITED:.+]] = stream.timepoint.await %[[DONE]] => %[[RES]] : !stream.resource<*>
// CHECK-NEXT: hal.fence.signal<%[[SIGNAL]] : !hal.fence>
// The result's users read the awaited value.
// CHECK-NEXT: %[[EXT:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[AWAITED]]
// CHECK-NEXT: stream.tensor.export on(#hal.device.affinity<@device_b>) %[[EXT]]
// CHECK-NOT:  stream.timepoint.chain_external
// CHECK:      util.return
// CHECK-LABEL: util.func public @chain_of_join(
// CHECK-SAME: %[[WAIT:[a-z0-9_]+]]: !hal.fence, %[[SIGNAL:[a-z0-9_]+]]: !hal.fence
// CHECK:      %[[J:.+]] = stream.timepoint.join max(
// CHECK-NEXT: %[[OWN:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[J]] => (!hal.fence)
// CHECK-NEXT: util.call @__mdc_host_relay(%[[OWN]], %[[SIGNAL]]) : (!hal.fence, !hal.fence) -> ()
// CHECK-NEXT: util.return
// CHECK-LABEL: util.func public @own_fence(
// CHECK:      %[[F:.+]] = hal.fence.create
// CHECK-NEXT: %[[T:.+]] = stream.timepoint.import on(#hal.device.affinity<@device_a>) %[[F]] : (!hal.fence) => !stream.timepoint
// CHECK-NEXT: util.return %[[T]]
// The helpers: a host await (the lowerings' own: a null fence, which a
// synchronous wrapper passes, is no wait; a failed wait stops the call),
// and a host await then signal.
// CHECK:      util.func private @__mdc_host_await(%[[F:[a-z0-9_]+]]: !hal.fence)
// CHECK-NEXT: arith.constant -1 : i32
// CHECK-NEXT: %[[NONE:.+]] = util.null : !hal.fence
// CHECK-NEXT: %[[IS_NONE:.+]] = util.cmp.eq %[[F]], %[[NONE]] : !hal.fence
// CHECK-NEXT: scf.if %[[IS_NONE]] {
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[S:.+]] = hal.fence.await until([%[[F]]])
// CHECK:      util.status.check_ok %{{.+}}, "mdc: waiting on a fence on the host failed"
// CHECK:      util.func private @__mdc_host_relay(%[[OWN:[a-z0-9_]+]]: !hal.fence, %[[CALLER:[a-z0-9_]+]]: !hal.fence)
// CHECK:      hal.fence.await until([%[[OWN]]])
// CHECK:      hal.fence.signal<%[[CALLER]] : !hal.fence>

// -----

// Only local devices: nothing changes.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @local_only(%arg0: !hal.buffer_view, %wait: !hal.fence, %signal: !hal.fence) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<8xi32> : index
    %x = stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0 : !hal.buffer_view -> tensor<8xi32> in !stream.resource<external>{%size}
    %ready = stream.timepoint.import on(#hal.device.affinity<@device_b>) %wait : (!hal.fence) => !stream.timepoint
    %x_ready = stream.timepoint.await %ready => %x : !stream.resource<external>{%size}
    %y = stream.async.cast on(#hal.device.affinity<@device_b>) %x_ready : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
    %result, %done = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %y : !stream.resource<*>{%size} => !stream.timepoint
    stream.timepoint.chain_external on(#hal.device.affinity<@device_b>) %done => (%signal : !hal.fence)
    %ext = stream.async.cast on(#hal.device.affinity<@device_b>) %result : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@device_b>) %ext : tensor<8xi32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.func public @local_only(
// CHECK-SAME: %{{.+}}: !hal.buffer_view, %[[WAIT:[a-z0-9_]+]]: !hal.fence, %[[SIGNAL:[a-z0-9_]+]]: !hal.fence
// CHECK-NOT:  __mdc_host
// CHECK:      %[[T:.+]] = stream.timepoint.import on(#hal.device.affinity<@device_b>) %[[WAIT]] : (!hal.fence) => !stream.timepoint
// CHECK-NEXT: stream.timepoint.await %[[T]] =>
// CHECK-NOT:  __mdc_host
// CHECK-NOT:  hal.fence.signal
// CHECK:      %[[RES:.+]], %[[DONE:.+]] = stream.timepoint.barrier
// CHECK-NEXT: stream.timepoint.chain_external on(#hal.device.affinity<@device_b>) %[[DONE]] => (%[[SIGNAL]] : !hal.fence)
// CHECK-NEXT: stream.async.cast on(#hal.device.affinity<@device_b>) %[[RES]]
// CHECK-NOT:  __mdc_host
// CHECK-NOT:  hal.fence.signal

// -----

// Two devices of one GPU driver: nothing changes either.
module attributes {stream.affinity.default = #hal.device.affinity<@gpu0>} {
  util.global private @gpu0 = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu1 = #hal.device.target<"cuda", {ordinal = 1 : index}> : !hal.device
  util.func public @cuda_only(%wait: !hal.fence, %signal: !hal.fence) {
    %ready = stream.timepoint.import on(#hal.device.affinity<@gpu0>) %wait : (!hal.fence) => !stream.timepoint
    stream.timepoint.chain_external on(#hal.device.affinity<@gpu1>) %ready => (%signal : !hal.fence)
    util.return
  }
}
// CHECK-LABEL: util.func public @cuda_only(
// CHECK-SAME: %[[WAIT:[a-z0-9_]+]]: !hal.fence, %[[SIGNAL:[a-z0-9_]+]]: !hal.fence
// CHECK-NEXT: %[[T:.+]] = stream.timepoint.import on(#hal.device.affinity<@gpu0>) %[[WAIT]]
// CHECK-NEXT: stream.timepoint.chain_external on(#hal.device.affinity<@gpu1>) %[[T]] => (%[[SIGNAL]] : !hal.fence)
// CHECK-NEXT: util.return
// CHECK-NOT:  __mdc_host

// FORCED-LABEL: util.func public @forced_link(
// FORCED-SAME: %[[WAIT:[a-z0-9_]+]]: !hal.fence, %[[SIGNAL:[a-z0-9_]+]]: !hal.fence
// FORCED-NEXT: util.call @__mdc_host_await(%[[WAIT]])
// FORCED-NEXT: %[[NOW:.+]] = stream.timepoint.immediate
// FORCED-NEXT: %[[OWN:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[NOW]] => (!hal.fence)
// FORCED-NEXT: util.call @__mdc_host_relay(%[[OWN]], %[[SIGNAL]])
// FORCED-NOT:  stream.timepoint.import
// FORCED-NOT:  stream.timepoint.chain_external

// LOCAL-LABEL: util.func public @forced_link(
// LOCAL-SAME: %[[WAIT:[a-z0-9_]+]]: !hal.fence, %[[SIGNAL:[a-z0-9_]+]]: !hal.fence
// LOCAL-NEXT: %[[T:.+]] = stream.timepoint.import on(#hal.device.affinity<@device_a>) %[[WAIT]]
// LOCAL-NEXT: stream.timepoint.chain_external on(#hal.device.affinity<@device_b>) %[[T]] => (%[[SIGNAL]] : !hal.fence)
// LOCAL-NOT:  __mdc_host

// BOTH-LABEL: util.func public @result_on_gpu(
// BOTH-SAME: %[[ARG:[a-z0-9_]+]]: !hal.buffer_view, %[[WAIT:[a-z0-9_]+]]: !hal.fence, %[[SIGNAL:[a-z0-9_]+]]: !hal.fence
// BOTH:      util.call @__mdc_host_await(%[[WAIT]])
// BOTH-NEXT: %[[NOW:.+]] = stream.timepoint.immediate
// BOTH-NEXT: stream.timepoint.await %[[NOW]] =>
// BOTH:      %[[Z:.+]] = stream.async.clone on(#hal.device.affinity<@device_a>)
// BOTH:      %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %{{.+}} : !stream.resource<external>
// BOTH-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// BOTH-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>
// BOTH-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// BOTH-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// BOTH-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// BOTH:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[O]])
// BOTH:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]]
// BOTH-NEXT: %[[ON_B:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I]]
// BOTH-NEXT: %[[RES:.+]], %[[DONE:.+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[ON_B]]
// BOTH-NEXT: %[[AW:.+]] = stream.timepoint.await %[[DONE]] => %[[RES]]
// BOTH-NEXT: hal.fence.signal<%[[SIGNAL]] : !hal.fence>
// BOTH-NEXT: %[[EXT:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[AW]]
// BOTH-NEXT: stream.tensor.export on(#hal.device.affinity<@device_b>) %[[EXT]] : tensor<8xi32>
// BOTH-NOT:  stream.timepoint.import
// BOTH-NOT:  stream.timepoint.chain_external
// BOTH-NOT:  hal.fence.signal
// BOTH:      util.func private @__mdc_host_await(
// BOTH-NOT:  util.func private @__mdc_host_await_1
