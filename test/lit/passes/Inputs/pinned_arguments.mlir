// Public-function arguments imported on the CPU (device_a) that cross to
// the GPU (device_b), and values that look like them but are not.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // The argument itself goes to the GPU.
  util.func public @argument_to_gpu(%arg0: !hal.buffer_view) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<1024xf32> : index
    %in = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0 : !hal.buffer_view -> tensor<1024xf32> in !stream.resource<external>{%size}
    %any = stream.async.cast on(#hal.device.affinity<@device_a>) %in : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
    %on_b = stream.async.transfer %any : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %out = stream.async.cast on(#hal.device.affinity<@device_b>) %on_b : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %view = stream.tensor.export on(#hal.device.affinity<@device_b>) %out : tensor<1024xf32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %view : !hal.buffer_view
  }
  // The second argument, under the async-external model: it is ready when
  // the caller's wait fence is, which the copy waits for.
  util.func public @second_argument_async(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %wait: !hal.fence) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<1024xf32> : index
    %in = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg1 : !hal.buffer_view -> tensor<1024xf32> in !stream.resource<external>{%size}
    %tp = stream.timepoint.import on(#hal.device.affinity<@device_a>) %wait : (!hal.fence) => !stream.timepoint
    %ready = stream.timepoint.await %tp => %in : !stream.resource<external>{%size}
    %any = stream.async.cast on(#hal.device.affinity<@device_a>) %ready : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
    %on_b = stream.async.transfer %any : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
  // Not an argument: a value made on the CPU.
  util.func public @made_on_cpu(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<1024xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<1024xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
  // Not a public function's argument: its caller decides where it lives.
  util.func private @private_argument(%arg0: !hal.buffer_view) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<1024xf32> : index
    %in = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0 : !hal.buffer_view -> tensor<1024xf32> in !stream.resource<external>{%size}
    %on_b = stream.async.transfer %in : !stream.resource<external>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
  util.func public @calls_private(%arg0: !hal.buffer_view) -> !stream.resource<*> {
    %r = util.call @private_argument(%arg0) : (!hal.buffer_view) -> !stream.resource<*>
    util.return %r : !stream.resource<*>
  }
  // Back from the GPU into the caller's output storage (iree.abi.output),
  // returned as IREE returns such storage: a clone of a slice of it.
  util.func public @into_output(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view {
    %c0 = arith.constant 0 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<1024xf32> : index
    %in = stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0 : !hal.buffer_view -> tensor<1024xf32> in !stream.resource<external>{%size}
    %any = stream.async.cast on(#hal.device.affinity<@device_b>) %in : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
    %on_a = stream.async.transfer %any : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    %storage = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %arg1 : !hal.buffer_view -> tensor<1024xf32> in !stream.resource<external>{%size}
    %written = stream.async.update on(#hal.device.affinity<@device_a>) %on_a, %storage[%c0 to %size] : !stream.resource<*>{%size} -> %storage as !stream.resource<external>{%size}
    %sliced = stream.async.slice on(#hal.device.affinity<@device_a>) %written[%c0 to %size] : !stream.resource<external>{%size} -> !stream.resource<external>{%size}
    %cloned = stream.async.clone on(#hal.device.affinity<@device_a>) %sliced : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
    %out = stream.async.cast on(#hal.device.affinity<@device_a>) %cloned : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %view = stream.tensor.export on(#hal.device.affinity<@device_a>) %out : tensor<1024xf32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %view : !hal.buffer_view
  }
  // Written at an offset into the storage: not the storage's whole value.
  util.func public @into_output_at_offset(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !stream.resource<external> {
    %c16 = arith.constant 16 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<1024xf32> : index
    %bigger = arith.addi %size, %c16 : index
    %in = stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0 : !hal.buffer_view -> tensor<1024xf32> in !stream.resource<external>{%size}
    %on_a = stream.async.transfer %in : !stream.resource<external>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    %storage = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %arg1 : !hal.buffer_view -> tensor<1028xf32> in !stream.resource<external>{%bigger}
    %written = stream.async.update on(#hal.device.affinity<@device_a>) %on_a, %storage[%c16 to %bigger] : !stream.resource<*>{%size} -> %storage as !stream.resource<external>{%bigger}
    util.return %written : !stream.resource<external>
  }
}
