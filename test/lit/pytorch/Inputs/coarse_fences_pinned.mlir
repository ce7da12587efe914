// IREE's coarse-fences ABI written out by hand, as IREE's torch input
// conversion leaves an export: @add$async imports its argument on
// __device_0 after the wait fence and moves it to __device_1; @add makes a
// fence, calls it with its own argument and waits.
util.func public @add$async(%arg0: !hal.buffer_view, %wait: !hal.fence, %signal: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never, iree.abi.model = "coarse-fences", iree.abi.stub} {
  %x = hal.tensor.import on(#hal.device.promise<@__device_0>) wait(%wait) => %arg0 : !hal.buffer_view -> tensor<1024xf32>
  %on_1 = flow.tensor.transfer %x : tensor<1024xf32> to #hal.device.promise<@__device_1>
  %sum = arith.addf %on_1, %on_1 : tensor<1024xf32>
  %ready = hal.tensor.barrier join(%sum : tensor<1024xf32>) => %signal : !hal.fence
  %out = hal.tensor.export %ready : tensor<1024xf32> -> !hal.buffer_view
  util.return %out : !hal.buffer_view
}
util.func public @add(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
  %none = util.null : !hal.fence
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %fence = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  %r = util.call @add$async(%arg0, %none, %fence) : (!hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
  %forever = arith.constant -1 : i32
  %status = hal.fence.await until([%fence]) timeout_millis(%forever) flags("None") : i32
  util.return %r : !hal.buffer_view
}
