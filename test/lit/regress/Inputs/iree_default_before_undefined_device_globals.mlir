module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
util.global private @device_a : !hal.device
util.global private @device_b : !hal.device
util.global private @device_c : !hal.device
func.func public @fanout(%x: tensor<4x5xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) -> (tensor<4x5xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %xb = flow.tensor.transfer %x : tensor<4x5xf32> to #hal.device.promise<@device_b>
  %xc = flow.tensor.transfer %x : tensor<4x5xf32> to #hal.device.promise<@device_c>
  %b = arith.mulf %xb, %xb : tensor<4x5xf32>
  %c = arith.addf %xc, %xc : tensor<4x5xf32>
  %bb = flow.tensor.transfer %b : tensor<4x5xf32> to #hal.device.promise<@device_a>
  %cb = flow.tensor.transfer %c : tensor<4x5xf32> to #hal.device.promise<@device_a>
  %r = arith.addf %bb, %cb : tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
}
