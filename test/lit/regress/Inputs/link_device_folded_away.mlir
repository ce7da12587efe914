// @device_b appears only where IREE optimises it away.
func.func public @unused_arg_on_b(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %unused: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %r = arith.addf %x, %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func public @there_and_back(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %b = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %a = flow.tensor.transfer %b : tensor<4xf32> to #hal.device.promise<@device_a>
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}
