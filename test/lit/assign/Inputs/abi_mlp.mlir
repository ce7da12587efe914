// A PyTorch export as mdc's input level has it: IREE's coarse-fences ABI.
// @main$async imports its two !hal.buffer_view arguments (the second with
// its own device, gpu: a pin) and exports its result through a barrier;
// @main only makes the fences and calls it. Units of @main$async in
// program order: 0 matmul (x by the weight @w), 1 add (of y).
module @abi_mlp {
  util.global private @w = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  util.func public @main$async(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.fence, %arg3: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never, iree.abi.model = "coarse-fences", iree.abi.stub} {
    %x = hal.tensor.import wait(%arg2) => %arg0 : !hal.buffer_view -> tensor<2x3xf32>
    %y = hal.tensor.import on(#hal.device.promise<@gpu>) wait(%arg2) => %arg1 : !hal.buffer_view -> tensor<2x2xf32>
    %w = util.global.load @w : tensor<3x2xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x2xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
    %m = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x2xf32>) outs(%acc : tensor<2x2xf32>) -> tensor<2x2xf32>
    %a = arith.addf %m, %y : tensor<2x2xf32>
    %b = hal.tensor.barrier join(%a : tensor<2x2xf32>) => %arg3 : !hal.fence
    %r = hal.tensor.export %b : tensor<2x2xf32> -> !hal.buffer_view
    util.return %r : !hal.buffer_view
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
    %none = util.null : !hal.fence
    %c0 = arith.constant 0 : index
    %device = hal.devices.get %c0 : !hal.device
    %fence = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
    %r = util.call @main$async(%arg0, %arg1, %none, %fence) : (!hal.buffer_view, !hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
    %forever = arith.constant -1 : i32
    %status = hal.fence.await until([%fence]) timeout_millis(%forever) flags("None") : i32
    util.return %r : !hal.buffer_view
  }
}
