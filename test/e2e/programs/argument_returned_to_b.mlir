// The other direction: arguments on device_a (%x declared there, %y on no
// device, so on the default one) come back as results declared on device_b,
// %x unchanged and %y through tensor.collapse_shape; each is staged a -> b.
func.func public @argument_returned_to_b(
    %x: tensor<3xi64> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %y: tensor<2x2xf16>
  ) -> (tensor<3xi64> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<4xf16> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %flat = tensor.collapse_shape %y [[0, 1]] : tensor<2x2xf16> into tensor<4xf16>
  return %x, %flat : tensor<3xi64>, tensor<4xf16>
}
