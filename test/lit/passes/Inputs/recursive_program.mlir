// A program whose only public function calls a function that calls itself.
func.func private @forever(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @forever(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func public @main(%y: tensor<4xf32>) -> tensor<4xf32> {
  %s = call @forever(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
