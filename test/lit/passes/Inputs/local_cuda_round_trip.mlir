// Values computed on the CPU (a dispatch, or a splat) crossing to the GPU,
// and back; 128 KiB each, above transfer_insertion.SMALL_CROSSING_BYTES.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // A stand-in kernel: its body does not matter to transfer-insertion.
  stream.executable private @negate {
    stream.executable.export public @negate_32768xf32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @negate_32768xf32(%in: !stream.binding, %out: !stream.binding) {
        return
      }
    }
  }
  util.func public @there_and_back(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<32768xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<32768xf32> in !stream.resource<*>{%size}
    %on_a = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @negate::@negate_32768xf32(%x) : (tensor<32768xf32> in !stream.resource<*>{%size}) -> tensor<32768xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %back = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %back : !stream.resource<*>
  }
  // Two values computed on the CPU, both moved to the GPU.
  util.func public @two_sites(%v: f32, %w: f32) -> (!stream.resource<*>, !stream.resource<*>) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<32768xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<32768xf32> in !stream.resource<*>{%size}
    %y = stream.tensor.splat on(#hal.device.affinity<@device_a>) %w : f32 -> tensor<32768xf32> in !stream.resource<*>{%size}
    %xb = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %yb = stream.async.transfer %y : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %xb, %yb : !stream.resource<*>, !stream.resource<*>
  }
  // A dispatch result also used on the CPU: the dispatch must not write
  // into the pinned buffer (the other use would read it after the next call
  // overwrote it); a copy dispatch writes there instead.
  util.func public @also_used_here(%v: f32) -> (!stream.resource<*>, !stream.resource<*>) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<32768xf32> : index
    %s = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<32768xf32> in !stream.resource<*>{%size}
    %x = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @negate::@negate_32768xf32(%s) : (tensor<32768xf32> in !stream.resource<*>{%size}) -> tensor<32768xf32> in !stream.resource<*>{%size}
    %xb = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %x, %xb : !stream.resource<*>, !stream.resource<*>
  }
  // Staging in an initializer runs once: the copying lowering stays.
  util.global private @on_b : !stream.resource<constant>
  util.initializer {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<32768xf32> : index
    %c = arith.constant 1.0 : f32
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %c : f32 -> tensor<32768xf32> in !stream.resource<*>{%size}
    %xb = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<constant>{%size}
    util.global.store %xb, @on_b : !stream.resource<constant>
    util.return
  }
}
