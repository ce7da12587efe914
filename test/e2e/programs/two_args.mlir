// Arguments on different devices feed one computation (crossing shape 3).
func.func public @add_across(
    %x: tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %y: tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}
  ) -> (tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %sum = arith.addf %x, %y : tensor<2x3xf32>
  return %sum : tensor<2x3xf32>
}
