// chain.mlir with the argument %y on gpu (the caller gives it there).
// A gather from a table, a matmul with a weight, an add of an argument, a
// reshape there and back and an exp: the input program (IR after IREE's
// input phase) assign-devices reads. Units in program order: 0 gather,
// 1 matmul, 2 add, 3 collapse_shape, 4 expand_shape, 5 exp.
#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
module {
  util.global private @w1 = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  util.global private @table = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [0.5, 0.25, 0.125]]> : tensor<4x3xf32>
  util.func public @main(%ids: tensor<2xi64>, %y: tensor<2x2xf32> {iree.abi.affinity = #hal.device.promise<@gpu>}) -> tensor<2x2xf32> {
    %table = util.global.load @table : tensor<4x3xf32>
    %e0 = tensor.empty() : tensor<2x3xf32>
    %rows = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2xi64>) outs(%e0 : tensor<2x3xf32>) {
    ^bb0(%in: i64, %out: f32):
      %row = arith.index_cast %in : i64 to index
      %col = linalg.index 1 : index
      %v = tensor.extract %table[%row, %col] : tensor<4x3xf32>
      linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %w1 = util.global.load @w1 : tensor<3x2xf32>
    %e1 = tensor.empty() : tensor<2x2xf32>
    %zero = arith.constant 0.0 : f32
    %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x2xf32>) -> tensor<2x2xf32>
    %m = linalg.matmul ins(%rows, %w1 : tensor<2x3xf32>, tensor<3x2xf32>) outs(%acc : tensor<2x2xf32>) -> tensor<2x2xf32>
    %a = arith.addf %m, %y : tensor<2x2xf32>
    %flat = tensor.collapse_shape %a [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
    %back = tensor.expand_shape %flat [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
    %s = math.exp %back : tensor<2x2xf32>
    util.return %s : tensor<2x2xf32>
  }
}
