// A transfer already in the program pins unit 0 (the transfer) to gpu.
module {
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %g = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@gpu>
    %e = math.exp %g : tensor<4xf32>
    util.return %e : tensor<4xf32>
  }
}
