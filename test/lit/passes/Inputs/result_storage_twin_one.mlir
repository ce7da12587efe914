// A value made on the GPU and returned on the CPU.
func.func public @back(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = arith.addf %x, %x : tensor<4xf32>
  %z = flow.tensor.transfer %y : tensor<4xf32> to #hal.device.promise<@device_a>
  return %z : tensor<4xf32>
}
