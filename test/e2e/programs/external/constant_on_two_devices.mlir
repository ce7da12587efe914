// Shape: one constant moved by transfers to two other devices, each copy
// consumed there with the (unannotated) argument, the two results brought
// back to @dev_a.
// devices: dev_a dev_b dev_c
// call: constant_twice
// inputs: 3xf32
func.func public @constant_twice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %k = arith.constant dense<[0.5, -2.0, 8.0]> : tensor<3xf32>
  %kb = flow.tensor.transfer %k : tensor<3xf32> to #hal.device.promise<@dev_b>
  %kc = flow.tensor.transfer %k : tensor<3xf32> to #hal.device.promise<@dev_c>
  %xb = flow.tensor.transfer %x : tensor<3xf32> to #hal.device.promise<@dev_b>
  %xc = flow.tensor.transfer %x : tensor<3xf32> to #hal.device.promise<@dev_c>
  %pb = arith.mulf %xb, %kb : tensor<3xf32>
  %pc = arith.addf %xc, %kc : tensor<3xf32>
  %ab = flow.tensor.transfer %pb : tensor<3xf32> to #hal.device.promise<@dev_a>
  %ac = flow.tensor.transfer %pc : tensor<3xf32> to #hal.device.promise<@dev_a>
  %r = arith.subf %ab, %ac : tensor<3xf32>
  return %r : tensor<3xf32>
}
