// Found by the random program generator (test/e2e/progen.py, seed
// 796020279 index 28, minimised by hand): everything runs on device_b, in a
// loop, while the module's first (default) device is a CPU. IREE frees the
// loop-carried buffer with `hal.device.queue.dealloca<%default> ...
// flags(PreferOrigin)`, and the verifier rejected mdc's output
// ("'hal.device.queue.dealloca' on a (local) uses a device-local buffer
// allocated by device_b"). With PreferOrigin the runtime performs the
// deallocation on the allocating device. A first fix turned the dealloca
// into a barrier; on the H200 that module crashed (SIGSEGV), while stock
// iree-compile's module with the dealloca ran correctly (test/e2e/gpu_kit.py:
// loop_on_gpu, loop_on_gpu_stock_iree). So the verifier now accepts
// PreferOrigin deallocations (test/lit/verifier/deallocas.mlir), and mdc
// keeps IREE's.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=device_a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 --input=3 | FileCheck %s
// RUN: mdc-compile %s --device=device_a=local[0] --device=b=cuda[0] --compile-to=hal -o %t/cuda.hal.mlir
// RUN: FileCheck %s --check-prefix=HAL < %t/cuda.hal.mlir
// RUN: mdc-compile %s --device=device_a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 4xf32=-3 -6 -9 -12
// HAL: hal.device.queue.dealloca<%device_a : !hal.device> {{.*}} flags(PreferOrigin)

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
