// One weight, stored N x K as torch's Linear stores it: transposed on
// device_a (IREE hoists that into an initializer), moved to device_b and
// read there by a matmul of M = 8 (@prefill) and one of M = 1 (@decode);
// device_a does the rest.
util.global private @w = #flow.parameter.named<"model"::"w"> : tensor<32x64xf32>
func.func public @prefill(%x: tensor<8x64xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %w = util.global.load @w : tensor<32x64xf32>
  %te = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%te : tensor<64x32xf32>) permutation = [1, 0]
  %x_b = flow.tensor.transfer %x : tensor<8x64xf32> to #hal.device.promise<@device_b>
  %w_b = flow.tensor.transfer %wt : tensor<64x32xf32> to #hal.device.promise<@device_b>
  %e = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y_b = linalg.matmul ins(%x_b, %w_b : tensor<8x64xf32>, tensor<64x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = flow.tensor.transfer %y_b : tensor<8x32xf32> to #hal.device.promise<@device_a>
  %r = arith.maximumf %y, %z : tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
func.func public @decode(%x: tensor<1x64xf32>) -> tensor<1x32xf32> {
  %zero = arith.constant 0.0 : f32
  %w = util.global.load @w : tensor<32x64xf32>
  %te = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%te : tensor<64x32xf32>) permutation = [1, 0]
  %x_b = flow.tensor.transfer %x : tensor<1x64xf32> to #hal.device.promise<@device_b>
  %w_b = flow.tensor.transfer %wt : tensor<64x32xf32> to #hal.device.promise<@device_b>
  %e = tensor.empty() : tensor<1x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32xf32>) -> tensor<1x32xf32>
  %y_b = linalg.matmul ins(%x_b, %w_b : tensor<1x64xf32>, tensor<64x32xf32>) outs(%z : tensor<1x32xf32>) -> tensor<1x32xf32>
  %y = flow.tensor.transfer %y_b : tensor<1x32xf32> to #hal.device.promise<@device_a>
  %r = arith.maximumf %y, %z : tensor<1x32xf32>
  return %r : tensor<1x32xf32>
}
