// The form IREE's own hoisting gives a torch.nn.Linear: the transposed
// weight is a global, @__hoisted_tensor_2x3xf32, that an initializer
// computes from @w at start-up, and @main reads it (units: 0 matmul, 1 exp).
module {
  util.global private @w = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  util.global private @__hoisted_tensor_2x3xf32 : tensor<2x3xf32>
  util.initializer {
    %w = util.global.load @w : tensor<3x2xf32>
    %e = tensor.empty() : tensor<2x3xf32>
    %wt = linalg.transpose ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
    util.global.store %wt, @__hoisted_tensor_2x3xf32 : tensor<2x3xf32>
    util.return
  }
  util.func public @main(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
    %wt = util.global.load immutable @__hoisted_tensor_2x3xf32 : tensor<2x3xf32>
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<4x3xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %m = linalg.matmul ins(%x, %wt : tensor<4x2xf32>, tensor<2x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    %y = math.exp %m : tensor<4x3xf32>
    util.return %y : tensor<4x3xf32>
  }
}
