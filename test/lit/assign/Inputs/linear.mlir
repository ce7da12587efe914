// torch.nn.Linear as mdc's input level has it: the weight @w (out 3, in 2)
// transposed, then a matmul and the bias added. The transpose reads only a
// weight: assign-devices hoists it into a global computed at start-up
// (passes/assignment/hoist.py), so the units of @main are 0 matmul, 1 add.
// @again makes the same transpose (one global for both) and reads it on
// the host after an exp of its argument: units 0 exp, 1 matmul.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  util.global private @w = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  util.global private @b = dense<[0.5, 0.25, 0.125]> : tensor<3xf32>
  util.func public @main(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
    %w = util.global.load @w : tensor<3x2xf32>
    %e = tensor.empty() : tensor<2x3xf32>
    %wt = linalg.transpose ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<4x3xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %m = linalg.matmul ins(%x, %wt : tensor<4x2xf32>, tensor<2x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    %b = util.global.load @b : tensor<3xf32>
    %y = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e1 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %s = arith.addf %in, %in_0 : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    util.return %y : tensor<4x3xf32>
  }
  util.func public @again(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
    %x1 = math.exp %x : tensor<4x2xf32>
    %w = util.global.load @w : tensor<3x2xf32>
    %e = tensor.empty() : tensor<2x3xf32>
    %wt = linalg.transpose ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<4x3xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %m = linalg.matmul ins(%x1, %wt : tensor<4x2xf32>, tensor<2x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    util.return %m : tensor<4x3xf32>
  }
}
