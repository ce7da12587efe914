// A constant placed on @gpu, scaled there by its index (no argument), moved
// to @cpu and read there: every value of @main is a constant, so const-eval
// hoists all of it, the transfer included. @scale uses @gpu too, so the
// module keeps its device global (iree_undefined_device_global.test is the
// case where it does not).
#map = affine_map<(d0) -> (d0)>
module @const_eval_transfer {
  util.global private @inv_freq {stream.affinity = #hal.device.promise<@gpu>} = dense<[1.0, 0.5, 0.25, 0.125]> : tensor<4xf32>
  util.func public @main() -> tensor<4xf32> {
    %inv_freq = util.global.load @inv_freq : tensor<4xf32>
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%inv_freq : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 0 : index
      %j = arith.index_cast %i : index to i64
      %f = arith.sitofp %j : i64 to f32
      %m = arith.mulf %f, %in : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    %2 = flow.tensor.transfer %1 : tensor<4xf32> to #hal.device.promise<@cpu>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%2 : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %c = math.cos %in : f32
      linalg.yield %c : f32
    } -> tensor<4xf32>
    util.return %3 : tensor<4xf32>
  }
  util.func public @scale(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = flow.tensor.transfer %arg0 : tensor<4xf32> to #hal.device.promise<@gpu>
    %1 = tensor.empty() : tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%0 : tensor<4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    %3 = flow.tensor.transfer %2 : tensor<4xf32> to #hal.device.promise<@cpu>
    util.return %3 : tensor<4xf32>
  }
}
