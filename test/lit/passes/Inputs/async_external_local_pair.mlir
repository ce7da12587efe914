// An async-external function on two local devices: the caller's wait fence
// imported on device_a, the signal fence chained on device_b.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @forced_link(%wait: !hal.fence, %signal: !hal.fence) {
    %ready = stream.timepoint.import on(#hal.device.affinity<@device_a>) %wait : (!hal.fence) => !stream.timepoint
    stream.timepoint.chain_external on(#hal.device.affinity<@device_b>) %ready => (%signal : !hal.fence)
    util.return
  }
}
