// See ../iree_loop_fence_await_before_call.test. @step$async and @step are
// what IREE's torch input conversion makes of an exported function (a
// coarse-fences function, and its sync wrapper); @loop calls @step in a
// loop with a computed value and a position: out = w + position.
module {
  util.func public @step$async(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %w: !hal.fence, %s: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never, iree.abi.model = "coarse-fences", iree.abi.stub} {
    %t = hal.tensor.import wait(%w) => %arg0 : !hal.buffer_view -> tensor<4xf32>
    %u = hal.tensor.import wait(%w) => %arg1 : !hal.buffer_view -> tensor<1xi64>
    %e0 = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t, %u : tensor<4xf32>, tensor<1xi64>) outs(%e0 : tensor<4xf32>) {
    ^bb0(%a: f32, %k: i64, %o: f32):
      %kf = arith.sitofp %k : i64 to f32
      %y = arith.addf %a, %kf : f32
      linalg.yield %y : f32
    } -> tensor<4xf32>
    %b = hal.tensor.barrier join(%r : tensor<4xf32>) => %s : !hal.fence
    %e = hal.tensor.export %b : tensor<4xf32> -> !hal.buffer_view
    util.return %e : !hal.buffer_view
  }
  util.func public @step(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
    %0 = util.null : !hal.fence
    %c-1_i32 = arith.constant -1 : i32
    %c0 = arith.constant 0 : index
    %device_0 = hal.devices.get %c0 : !hal.device
    %fence = hal.fence.create device(%device_0 : !hal.device) flags("None") : !hal.fence
    %1 = util.call @step$async(%arg0, %arg1, %0, %fence) : (!hal.buffer_view, !hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
    %status = hal.fence.await until([%fence]) timeout_millis(%c-1_i32) flags("None") : i32
    util.return %1 : !hal.buffer_view
  }
  util.func public @loop(%x: tensor<4xf32>, %count: i64) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.index_cast %count : i64 to index
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %x) -> (tensor<4xf32>) {
      %one = arith.constant dense<1.0> : tensor<4xf32>
      %w = arith.addf %v, %one : tensor<4xf32>
      %ii = arith.index_cast %i : index to i64
      %p = tensor.from_elements %ii : tensor<1xi64>
      %bv = hal.tensor.export %w : tensor<4xf32> -> !hal.buffer_view
      %bp = hal.tensor.export %p : tensor<1xi64> -> !hal.buffer_view
      %o = util.call @step(%bv, %bp) : (!hal.buffer_view, !hal.buffer_view) -> !hal.buffer_view
      %t = hal.tensor.import %o : !hal.buffer_view -> tensor<4xf32>
      scf.yield %t : tensor<4xf32>
    }
    util.return %r : tensor<4xf32>
  }
}
