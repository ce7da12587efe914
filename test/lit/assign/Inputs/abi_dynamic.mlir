// The coarse-fences ABI with a dynamic batch (the import's size from the
// buffer view) and a result its export keeps on gpu (a pin). One unit: 0 exp.
module @abi_dynamic {
  util.func public @main$async(%arg0: !hal.buffer_view, %arg1: !hal.fence, %arg2: !hal.fence) -> !hal.buffer_view attributes {iree.abi.model = "coarse-fences", iree.abi.stub} {
    %n = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[0] : index
    %x = hal.tensor.import wait(%arg1) => %arg0 : !hal.buffer_view -> tensor<?x4xf32>{%n}
    %s = math.exp %x : tensor<?x4xf32>
    %b = hal.tensor.barrier join(%s : tensor<?x4xf32>) => %arg2 : !hal.fence
    %c0 = arith.constant 0 : index
    %d = tensor.dim %b, %c0 : tensor<?x4xf32>
    %r = hal.tensor.export on(#hal.device.promise<@gpu>) %b : tensor<?x4xf32>{%d} -> !hal.buffer_view
    util.return %r : !hal.buffer_view
  }
}
