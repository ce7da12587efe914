// (x @ w1) on device_a, then @ w2 on device_b, then relu back on device_a.
func.func public @matmul_chain(
    %x: tensor<32x64xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %w1: tensor<64x48xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %w2: tensor<48x16xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<32x16xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x48xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x48xf32>) -> tensor<32x48xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x48xf32>) outs(%z1 : tensor<32x48xf32>) -> tensor<32x48xf32>
  %h_b = flow.tensor.transfer %h : tensor<32x48xf32> to #hal.device.promise<@device_b>
  %w2_b = flow.tensor.transfer %w2 : tensor<48x16xf32> to #hal.device.promise<@device_b>
  %e2 = tensor.empty() : tensor<32x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y_b = linalg.matmul ins(%h_b, %w2_b : tensor<32x48xf32>, tensor<48x16xf32>) outs(%z2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = flow.tensor.transfer %y_b : tensor<32x16xf32> to #hal.device.promise<@device_a>
  %relu = arith.maximumf %y, %z2 : tensor<32x16xf32>
  return %relu : tensor<32x16xf32>
}
