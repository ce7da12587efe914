func.func @broken(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.mulf %x, %x : tensor<4xf32>
  return %nope : tensor<4xf32>
}
