// The program of issue 18's report (iree-run-module-multi.mlir there; mutli_ as spelt).
func.func public @mutli_device_mul(
    %input: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %scale_a = arith.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %on_a = arith.mulf %input, %scale_a : tensor<4xf32>
  %moved = flow.tensor.transfer %on_a : tensor<4xf32> to #hal.device.promise<@device_b>
  %scale_b = arith.constant dense<[4.0, 5.0, 6.0, 7.0]> : tensor<4xf32>
  %on_b = arith.mulf %moved, %scale_b : tensor<4xf32>
  %back = flow.tensor.transfer %on_b : tensor<4xf32> to #hal.device.promise<@device_a>
  return %back : tensor<4xf32>
}
