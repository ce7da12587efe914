// Work that reads weights but that assign-devices does not hoist (hoist.py):
// each function keeps its units. @returned hands the transpose of @w out
// (unit 0 transpose); @broadcast broadcasts the transpose of @w over a
// batch of 2, more bytes than @w holds, which IREE fuses into its reader
// (the transpose is hoisted; the broadcast is a view of that weight, run
// where its reader runs: unit 0 batch_matmul); @argument
// adds an argument to @v (unit 0 add); @moved moves @v itself (units 0
// transfer, pinned, 1 exp); @iota reads no weight (units 0 iota, 1 add).
#id = affine_map<(d0, d1, d2) -> (d1, d2)>
#all = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#i1 = affine_map<(d0) -> (d0)>
module {
  util.global private @w = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  util.global private @v = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  util.func public @returned() -> tensor<2x3xf32> {
    %w = util.global.load @w : tensor<3x2xf32>
    %e = tensor.empty() : tensor<2x3xf32>
    %wt = linalg.transpose ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
    util.return %wt : tensor<2x3xf32>
  }
  util.func public @broadcast(%x: tensor<2x4x2xf32>) -> tensor<2x4x3xf32> {
    %w = util.global.load @w : tensor<3x2xf32>
    %e = tensor.empty() : tensor<2x3xf32>
    %wt = linalg.transpose ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
    %eb = tensor.empty() : tensor<2x2x3xf32>
    %wb = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["parallel", "parallel", "parallel"]} ins(%wt : tensor<2x3xf32>) outs(%eb : tensor<2x2x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x3xf32>
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<2x4x3xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    %m = linalg.batch_matmul ins(%x, %wb : tensor<2x4x2xf32>, tensor<2x2x3xf32>) outs(%acc : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    util.return %m : tensor<2x4x3xf32>
  }
  util.func public @argument(%x: tensor<4xf32>) -> tensor<4xf32> {
    %v = util.global.load @v : tensor<4xf32>
    %y = arith.addf %x, %v : tensor<4xf32>
    util.return %y : tensor<4xf32>
  }
  util.func public @moved(%x: tensor<4xf32>) -> tensor<4xf32> {
    %v = util.global.load @v : tensor<4xf32>
    %g = flow.tensor.transfer %v : tensor<4xf32> to #hal.device.promise<@gpu>
    %y = math.exp %g : tensor<4xf32>
    util.return %y : tensor<4xf32>
  }
  util.func public @iota(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %i = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
    ^bb0(%out: f32):
      %n = linalg.index 0 : index
      %n64 = arith.index_cast %n : index to i64
      %f = arith.sitofp %n64 : i64 to f32
      linalg.yield %f : f32
    } -> tensor<4xf32>
    %y = arith.addf %x, %i : tensor<4xf32>
    util.return %y : tensor<4xf32>
  }
}
