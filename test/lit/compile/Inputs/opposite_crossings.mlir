// Two arguments crossing in opposite directions: %x from device_a to
// device_b, %y from device_b to device_a.
func.func public @opposite(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %y_on_a = flow.tensor.transfer %y : tensor<4xf32> to #hal.device.promise<@device_a>
  %x_on_b = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %on_a = arith.addf %y_on_a, %x : tensor<4xf32>
  %on_b = arith.mulf %x_on_b, %y : tensor<4xf32>
  return %on_a, %on_b : tensor<4xf32>, tensor<4xf32>
}
