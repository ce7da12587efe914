// Two modules in one file, no `// -----`: the second has a global and an initializer.
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

// A transfer inside a util.initializer: the staging happens there too.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @on_gpu : !stream.resource<constant>
  util.initializer {
    %cst = stream.tensor.constant on(#hal.device.affinity<@device_a>) : tensor<2xi32> in !stream.resource<constant> = dense<[7, 9]> : tensor<2xi32>
    %size = stream.resource.size %cst : !stream.resource<constant>
    %moved = stream.async.transfer %cst : !stream.resource<constant>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<constant>{%size}
    util.global.store %moved, @on_gpu : !stream.resource<constant>
    util.return
  }
  util.func public @initializer_marker() {
    util.return
  }
}
