// A loop entirely on device_b in a program whose first device is a CPU:
// IREE frees the loop-carried buffer on the first device's queue
// (test/lit/regress/loop_on_gpu_dealloca_on_default_device.mlir).
func.func public @loop_on_b(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %n: index) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant dense<0.5> : tensor<4xf32>
  %start = arith.addf %x, %half : tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %start) -> (tensor<4xf32>) {
    %neg = arith.negf %acc : tensor<4xf32>
    scf.yield %neg : tensor<4xf32>
  }
  %y = arith.addf %r, %half : tensor<4xf32>
  %z = arith.subf %y, %x : tensor<4xf32>
  %w = arith.subf %z, %x : tensor<4xf32>
  return %w : tensor<4xf32>
}
