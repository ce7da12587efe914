// The shape IREE gives an async-external function computing on device_a
// (local) with its result declared on device_b (cuda): the wait fence is
// imported on device_a, and the barrier on device_b reads device_a's value.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @result_on_gpu(%arg0: !hal.buffer_view, %wait: !hal.fence, %signal: !hal.fence) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<8xi32> : index
    %x = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0 : !hal.buffer_view -> tensor<8xi32> in !stream.resource<external>{%size}
    %ready = stream.timepoint.import on(#hal.device.affinity<@device_a>) %wait : (!hal.fence) => !stream.timepoint
    %x_ready = stream.timepoint.await %ready => %x : !stream.resource<external>{%size}
    %y = stream.async.cast on(#hal.device.affinity<@device_a>) %x_ready : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
    %z = stream.async.clone on(#hal.device.affinity<@device_a>) %y : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
    %result, %done = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %z : !stream.resource<*>{%size} => !stream.timepoint
    stream.timepoint.chain_external on(#hal.device.affinity<@device_b>) %done => (%signal : !hal.fence)
    %ext = stream.async.cast on(#hal.device.affinity<@device_b>) %result : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@device_b>) %ext : tensor<8xi32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
