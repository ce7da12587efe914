// Small values (16 bytes, known at compile time) crossing from the CPU to
// the GPU and back, ones whose size is only known at run time, and a large
// one coming back.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // A stand-in kernel: its body does not matter to transfer-insertion.
  stream.executable private @scale {
    stream.executable.export public @scale_4xf32 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @scale_4xf32(%in: !stream.binding, %out: !stream.binding) {
        return
      }
    }
  }
  util.func public @there_and_back(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_a = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @scale::@scale_4xf32(%x) : (tensor<4xf32> in !stream.resource<*>{%size}) -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %size_b = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %scaled = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%on_b) : (tensor<4xf32> in !stream.resource<*>{%size}) -> tensor<4xf32> in !stream.resource<*>{%size_b}
    %back = stream.async.transfer %scaled : !stream.resource<*>{%size_b} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size_b}
    util.return %back : !stream.resource<*>
  }
  // The value on the GPU is returned, not read by a dispatch there.
  util.func public @returned(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
  // Two dispatches read the value on the GPU: the site's fence joins both.
  util.func public @two_readers(%v: f32) -> (!stream.resource<*>, !stream.resource<*>) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %r1 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%on_b) : (tensor<4xf32> in !stream.resource<*>{%size}) -> tensor<4xf32> in !stream.resource<*>{%size}
    %r2 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%on_b) : (tensor<4xf32> in !stream.resource<*>{%size}) -> tensor<4xf32> in !stream.resource<*>{%size}
    util.return %r1, %r2 : !stream.resource<*>, !stream.resource<*>
  }
  util.func public @dynamic(%v: f32, %n: index) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<?xf32>{%n} : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<?xf32>{%n} in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
  // A size known at run time only, read by a dispatch on the GPU: an
  // argument's value (sent on in pieces) ...
  util.func public @dynamic_read(%v: f32, %n: index) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<?xf32>{%n} : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<?xf32>{%n} in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %size_b = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<?xf32>{%n} : index
    %r = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%on_b) : (tensor<?xf32>{%n} in !stream.resource<*>{%size}) -> tensor<?xf32>{%n} in !stream.resource<*>{%size_b}
    util.return %r : !stream.resource<*>
  }
  // ... and a CPU kernel's result whose one use is the crossing (written
  // into pinned memory by that kernel).
  util.func public @dynamic_made_read(%v: f32, %n: index) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<?xf32>{%n} : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<?xf32>{%n} in !stream.resource<*>{%size}
    %on_a = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @scale::@scale_4xf32(%x) : (tensor<?xf32>{%n} in !stream.resource<*>{%size}) -> tensor<?xf32>{%n} in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %size_b = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<?xf32>{%n} : index
    %r = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%on_b) : (tensor<?xf32>{%n} in !stream.resource<*>{%size}) -> tensor<?xf32>{%n} in !stream.resource<*>{%size_b}
    util.return %r : !stream.resource<*>
  }
  // GPU -> CPU: a GPU kernel's result whose size is known at run time
  // only, written into pinned memory by that kernel ...
  util.func public @dynamic_back(%v: f32, %n: index) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<?xf32>{%n} : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<?xf32>{%n} in !stream.resource<*>{%size}
    %on_b = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%x) : (tensor<?xf32>{%n} in !stream.resource<*>{%size}) -> tensor<?xf32>{%n} in !stream.resource<*>{%size}
    %back = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %back : !stream.resource<*>
  }
  // ... and one known at compile time and above 64 KiB, which the GPU's
  // queue copy moves into pinned memory.
  util.func public @large_back(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<32768xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<32768xf32> in !stream.resource<*>{%size}
    %on_b = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%x) : (tensor<32768xf32> in !stream.resource<*>{%size}) -> tensor<32768xf32> in !stream.resource<*>{%size}
    %back = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %back : !stream.resource<*>
  }
}
