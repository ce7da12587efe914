// A local -> cuda -> local round trip of a value computed on the CPU.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @there_and_back(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %back = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %back : !stream.resource<*>
  }
  // Two values computed on the CPU, both moved to the GPU.
  util.func public @two_sites(%v: f32, %w: f32) -> (!stream.resource<*>, !stream.resource<*>) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %y = stream.tensor.splat on(#hal.device.affinity<@device_a>) %w : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %xb = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %yb = stream.async.transfer %y : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %xb, %yb : !stream.resource<*>, !stream.resource<*>
  }
  // A value also used on the CPU: copied, not written in place (the other
  // use would read the pinned buffer, which the next call overwrites).
  util.func public @also_used_here(%v: f32) -> (!stream.resource<*>, !stream.resource<*>) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %xb = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %x, %xb : !stream.resource<*>, !stream.resource<*>
  }
}
