// Regression, fixed (was: pass bug, host_fences.py): the barrier's result is used between
// the stream.timepoint.barrier and the stream.timepoint.chain_external. The
// pass inserts the stream.timepoint.await at the chain and redirects *every*
// other use of the barrier result to it, including the earlier one, and
// mdc-opt fails with "passes produced invalid IR: ... operand #0 does not
// dominate this use". (IREE's own output puts the chain right after the
// barrier, so this needs hand-written or reordered IR to show.)
// Expected: valid IR, exit 0: the await placed so that it dominates every use
// (e.g. right after the barrier), all uses read the awaited value, and the
// caller's fence signalled on the host.

// RUN: mdc-opt %s --pass=host-fences | FileCheck %s

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @use_before_chain(%arg0: !hal.buffer_view, %wait: !hal.fence, %signal: !hal.fence) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<8xi32> : index
    %x = stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0 : !hal.buffer_view -> tensor<8xi32> in !stream.resource<external>{%size}
    %y = stream.async.cast on(#hal.device.affinity<@device_b>) %x : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
    %result, %done = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %y : !stream.resource<*>{%size} => !stream.timepoint
    %ext = stream.async.cast on(#hal.device.affinity<@device_b>) %result : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    stream.timepoint.chain_external on(#hal.device.affinity<@device_b>) %done => (%signal : !hal.fence)
    %out = stream.tensor.export on(#hal.device.affinity<@device_b>) %ext : tensor<8xi32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.func public @use_before_chain(
// CHECK-SAME: %[[SIGNAL:[a-z0-9_]+]]: !hal.fence)
// CHECK:      %[[RES:.+]], %[[DONE:.+]] = stream.timepoint.barrier
// CHECK:      %[[AW:.+]] = stream.timepoint.await %[[DONE]] => %[[RES]]
// CHECK:      stream.async.cast on(#hal.device.affinity<@device_b>) %[[AW]]
// CHECK:      hal.fence.signal<%[[SIGNAL]] : !hal.fence>
// CHECK-NOT:  stream.timepoint.chain_external
