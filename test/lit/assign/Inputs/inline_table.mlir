// A table written inline (an arith.constant) and a splat: the table becomes
// a weight, placed like a global's; the splat stays where it is.
module {
  util.func public @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %t = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %one = arith.constant dense<1.0> : tensor<2x2xf32>
    %a = arith.addf %x, %t : tensor<2x2xf32>
    %b = arith.mulf %a, %one : tensor<2x2xf32>
    util.return %b : tensor<2x2xf32>
  }
}
