// Results computed on device_b (a GPU in use; a second CPU in tests) and
// returned on the CPU, device_a: what result-storage twins return without a
// copy. @squares has a static result on each device and one that stays on
// device_b; @negated's result has a dynamic shape; @scaled is linear (the
// GPU check calls it on inputs scaled by powers of two).
func.func public @squares(%x: tensor<4096xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4096xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4096xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<2x4096xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %sq = arith.mulf %x, %x : tensor<4096xf32>
  %cube = arith.mulf %sq, %x : tensor<4096xf32>
  %sq_a = flow.tensor.transfer %sq : tensor<4096xf32> to #hal.device.promise<@device_a>
  %x2 = tensor.expand_shape %sq [[0, 1]] output_shape [1, 4096] : tensor<4096xf32> into tensor<1x4096xf32>
  %c2 = tensor.expand_shape %cube [[0, 1]] output_shape [1, 4096] : tensor<4096xf32> into tensor<1x4096xf32>
  %pair = tensor.concat dim(0) %x2, %c2 : (tensor<1x4096xf32>, tensor<1x4096xf32>) -> tensor<2x4096xf32>
  %pair_a = flow.tensor.transfer %pair : tensor<2x4096xf32> to #hal.device.promise<@device_a>
  return %sq_a, %cube, %pair_a : tensor<4096xf32>, tensor<4096xf32>, tensor<2x4096xf32>
}

func.func public @negated(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %neg = arith.negf %x : tensor<?xf32>
  %back = flow.tensor.transfer %neg : tensor<?xf32>{%n} to #hal.device.promise<@device_a>
  return %back : tensor<?xf32>
}

func.func public @scaled(%x: tensor<512x512xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<512x512xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %three = arith.constant dense<3.0> : tensor<512x512xf32>
  %y = arith.mulf %x, %three : tensor<512x512xf32>
  %back = flow.tensor.transfer %y : tensor<512x512xf32> to #hal.device.promise<@device_a>
  return %back : tensor<512x512xf32>
}
