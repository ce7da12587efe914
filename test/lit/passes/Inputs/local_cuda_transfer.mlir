// One local -> cuda transfer; a shared input for error tests.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @local_to_cuda(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %0 = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %1 = stream.async.transfer %0 : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %1 : !stream.resource<*>
  }
}
