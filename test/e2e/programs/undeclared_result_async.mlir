// A coarse-fences function whose result, declared on no device, is
// computed on device_b from an argument moved there.
util.func public @async_square_on_b(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> tensor<4xf32> attributes {iree.abi.model = "coarse-fences"} {
  %m = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %s = arith.mulf %m, %m : tensor<4xf32>
  util.return %s : tensor<4xf32>
}
