// Stock IREE 3.13.0 loses @device_b; see ../iree_undefined_device_global.test.
func.func public @f(%x: tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<1x4xi8> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %k = arith.constant dense<4> : tensor<4xi8>
  %kb = flow.tensor.transfer %k : tensor<4xi8> to #hal.device.promise<@device_b>
  %r = tensor.expand_shape %kb [[0, 1]] output_shape [1, 4] : tensor<4xi8> into tensor<1x4xi8>
  return %r : tensor<1x4xi8>
}
