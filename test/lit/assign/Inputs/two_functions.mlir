// Two public functions that read one weight.
module {
  util.global private @w = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  util.func public @first(%x: tensor<4xf32>) -> tensor<4xf32> {
    %w = util.global.load @w : tensor<4xf32>
    %y = arith.addf %x, %w : tensor<4xf32>
    util.return %y : tensor<4xf32>
  }
  util.func public @second(%x: tensor<4xf32>) -> tensor<4xf32> {
    %w = util.global.load @w : tensor<4xf32>
    %y = arith.mulf %x, %w : tensor<4xf32>
    util.return %y : tensor<4xf32>
  }
}
