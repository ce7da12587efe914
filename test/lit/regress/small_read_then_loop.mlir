// Regression, found and fixed in the eighth session (2026-12-01), before it
// landed: GPU random programs (test/e2e/gpu_random.py, seed 20261130 index
// 29), minimised by hand. A small value read in place on device_b (the
// site's reads fence, transfer_insertion._Stager.finish) whose reader's
// result goes back to device_a inside a loop: the fence followed that
// result into the update in the loop body, and the barrier at the end of
// the outer block used a value of the inner one ("operand #0 does not
// dominate this use"). The fence now follows an update only in the
// reader's own block. Expected: compiles for cuda, and on a forced staged
// CPU pair runs as stock IREE does (x + n * x * x, with n = 3).
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --iree-cuda-target=sm_80 --compile-to=mdc -o %t/cuda.mlir
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/pair.vmfb
// RUN: iree-run-module --module=%t/pair.vmfb --device=local-task --device=local-task --input=8xf32=1,2,-3,0,0.5,-2,3,4 --input=3 | FileCheck %s
// CHECK: 8xf32=4 14 24 0 1.25 10 30 52

func.func @read_then_loop(%x: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %n: index)
    -> (tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %xb = flow.tensor.transfer %x : tensor<8xf32> to #hal.device.promise<@device_b>
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%xb : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.mulf %i, %i : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %r = scf.for %iv = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<8xf32>) {
    %ya = flow.tensor.transfer %y : tensor<8xf32> to #hal.device.promise<@device_a>
    %acc2 = arith.addf %acc, %ya : tensor<8xf32>
    scf.yield %acc2 : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
