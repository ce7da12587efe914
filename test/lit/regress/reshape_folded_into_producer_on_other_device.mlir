// Fixed (residence.py, Residence.transfer_source): found by the random
// program generator in CI (test/e2e/progen.py, seed 796039204 index 38),
// minimised by hand to this. A value is made on device_b (negf), then used
// on device_a twice: by a matmul and, reshaped, as a result. IREE folds the
// reshape into the producing dispatch on device_b and leaves the move back
// labelled `from(device_a)`; mdc took the label, did not stage the move,
// and its verifier rejected what IREE then made of it:
//   error: 'hal.allocator.select' makes one allocation serve device_a
//   (local) and device_b (local), which do not share memory
// for both --staging lowerings. Returning the value without the reshape,
// or without the matmul, compiled. mdc now takes a moved value's source
// from the device of the op that made it.
// Stock IREE (all-local) prints the two results checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/emplace.vmfb
// RUN: mdc-run --module=%t/emplace.vmfb --device=local-task --device=local-sync "--input=4x5xf32=[1 2 3 4 5][6 7 8 9 10][11 12 13 14 15][16 17 18 19 20]" --input=5x8xf32=1 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync "--input=4x5xf32=[1 2 3 4 5][6 7 8 9 10][11 12 13 14 15][16 17 18 19 20]" --input=5x8xf32=1 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 4x8xf32=[-15 -15 -15 -15 -15 -15 -15 -15][-40 -40 -40 -40 -40 -40 -40 -40][-65 -65 -65 -65 -65 -65 -65 -65][-90 -90 -90 -90 -90 -90 -90 -90]
// CHECK: 20xf32=-1 -2 -3 -4 -5 -6 -7 -8 -9 -10 -11 -12 -13 -14 -15 -16 -17 -18 -19 -20

func.func public @negate_there_use_here(
    %x: tensor<4x5xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %w: tensor<5x8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<4x8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<20xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %there = flow.tensor.transfer %x : tensor<4x5xf32> to #hal.device.promise<@device_b>
  %negated = arith.negf %there : tensor<4x5xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %product = linalg.matmul ins(%negated, %w : tensor<4x5xf32>, tensor<5x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %flat = tensor.collapse_shape %negated [[0, 1]] : tensor<4x5xf32> into tensor<20xf32>
  return %product, %flat : tensor<4x8xf32>, tensor<20xf32>
}
