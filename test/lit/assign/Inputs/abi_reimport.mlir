// A coarse-fences function that imports a buffer view it made itself, not
// one of its arguments: automatic placement cannot say where it lives.
module @abi_reimport {
  util.func public @main$async(%arg0: !hal.buffer_view, %arg1: !hal.fence, %arg2: !hal.fence) -> !hal.buffer_view attributes {iree.abi.model = "coarse-fences", iree.abi.stub} {
    %x = hal.tensor.import wait(%arg1) => %arg0 : !hal.buffer_view -> tensor<4xf32>
    %s = math.exp %x : tensor<4xf32>
    %v = hal.tensor.export %s : tensor<4xf32> -> !hal.buffer_view
    %y = hal.tensor.import %v : !hal.buffer_view -> tensor<4xf32>
    %t = math.exp %y : tensor<4xf32>
    %b = hal.tensor.barrier join(%t : tensor<4xf32>) => %arg2 : !hal.fence
    %r = hal.tensor.export %b : tensor<4xf32> -> !hal.buffer_view
    util.return %r : !hal.buffer_view
  }
}
