// Two public functions that share the weight @a (64 B): @first reads @a
// then @b, @second reads @a then @c (64 B each). Units of each: 0 matmul
// by @a, 1 tanh, 2 matmul by its own weight.
module {
  util.global private @a = dense<0.25> : tensor<4x4xf32>
  util.global private @b = dense<0.5> : tensor<4x4xf32>
  util.global private @c = dense<0.75> : tensor<4x4xf32>
  util.func public @first(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x4xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %a = util.global.load @a : tensor<4x4xf32>
    %h = linalg.matmul ins(%x, %a : tensor<1x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    %t = math.tanh %h : tensor<1x4xf32>
    %b = util.global.load @b : tensor<4x4xf32>
    %y = linalg.matmul ins(%t, %b : tensor<1x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    util.return %y : tensor<1x4xf32>
  }
  util.func public @second(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x4xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %a = util.global.load @a : tensor<4x4xf32>
    %h = linalg.matmul ins(%x, %a : tensor<1x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    %t = math.tanh %h : tensor<1x4xf32>
    %c = util.global.load @c : tensor<4x4xf32>
    %y = linalg.matmul ins(%t, %c : tensor<1x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    util.return %y : tensor<1x4xf32>
  }
}
