// Arguments declared on device_b come back as results declared on device_a:
// %x unchanged, %y through tensor.collapse_shape (no dispatch). IREE's ABI
// folds the first to the argument itself; both must be staged b -> a.
func.func public @argument_returned_elsewhere(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %y: tensor<2x3xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<6xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %flat = tensor.collapse_shape %y [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  return %x, %flat : tensor<4xf32>, tensor<6xi32>
}
