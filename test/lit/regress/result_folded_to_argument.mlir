// Found on the H200 build of gpu_random seed 20261213 index 102 (and on
// Vulkan, seed 20261214 index 46): a result computed from an argument on
// the CPU, declared on the GPU, that IREE's optimizations fold into the
// argument itself (a max over a unit dimension with the smallest value as
// its start). It was rejected by the verifier ("returned as it is: memory
// device_b cannot access"); the value must be staged to device_b instead.
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --no-host-entry-points --iree-opt-const-eval=false --compile-to=mdc -o - | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --iree-opt-const-eval=false -o %t.vmfb
// CHECK-LABEL: util.func public @folded(
// CHECK:         util.call @__mdc_stage
func.func public @folded(%arg0: tensor<1x7xi32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<1x7xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %e = tensor.expand_shape %arg0 [[0, 1], [2]] output_shape [1, 1, 7] : tensor<1x7xi32> into tensor<1x1x7xi32>
  %lowest = arith.constant -2147483648 : i32
  %init = tensor.empty() : tensor<1x7xi32>
  %fill = linalg.fill ins(%lowest : i32) outs(%init : tensor<1x7xi32>) -> tensor<1x7xi32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                         iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%e : tensor<1x1x7xi32>) outs(%fill : tensor<1x7xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %m = arith.maxsi %in, %acc : i32
    linalg.yield %m : i32
  } -> tensor<1x7xi32>
  return %max : tensor<1x7xi32>
}
