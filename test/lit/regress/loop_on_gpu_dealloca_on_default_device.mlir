// Found by the random program generator (test/e2e/progen.py, seed
// 796020279 index 28, minimised by hand): everything runs on device_b, in a
// loop, while the module's first (default) device is a CPU. IREE frees the
// loop-carried buffer with `hal.device.queue.dealloca<%default> ...
// flags(PreferOrigin)` with the default device's fences; the runtime moves it
// to device_b, a GPU queue signalling a CPU fence. The verifier rejected
// mdc's output ("'hal.device.queue.dealloca' on a (local) uses a
// device-local buffer allocated by device_b"); stock iree-compile for
// local+cuda emits the same dealloca (the IREE run below). The
// foreign-dealloca pass now makes it a barrier.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=device_a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 --input=3 | FileCheck %s
// RUN: mdc-compile %s --device=device_a=local[0] --device=b=cuda[0] --compile-to=hal -o %t/cuda.hal.mlir
// RUN: FileCheck %s --check-prefix=HAL < %t/cuda.hal.mlir
// RUN: iree-compile %s --iree-hal-target-device=device_a=local --iree-hal-target-device=device_b=cuda --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --iree-cuda-target=sm_80 --compile-to=hal -o %t/stock.hal.mlir
// RUN: FileCheck %s --check-prefix=STOCK < %t/stock.hal.mlir
// CHECK: 4xf32=-3 -6 -9 -12
// HAL-NOT: hal.device.queue.dealloca<%device_a
// HAL: hal.device.queue.barrier<%device_a
// STOCK: hal.device.queue.dealloca<%device_a : !hal.device> {{.*}} flags(PreferOrigin)

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
