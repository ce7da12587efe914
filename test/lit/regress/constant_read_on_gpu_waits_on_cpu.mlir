// Found by the fresh-clone test run (progen seed 796349654 index 104, on
// local + vulkan; local + cuda failed the same way), as minimized by
// `progen.py minimize`: a constant with no device of its own, moved to
// device_c and read there, reduced into a result on device_b (the GPU) and
// collapsed into a loop that sends it to device_b. At the loop's exit IREE
// frees the constant's copy on the default CPU device with a dealloca that
// awaits the loop's GPU timepoint, and the GPU's next queue alloca awaited
// that dealloca: a GPU queue waiting on a CPU's semaphore, which never runs,
// and the verifier refused the module. The cross-driver-waits pass has the
// host wait for the dealloca instead. The module compiles for cuda and for
// vulkan; test/e2e/test_transfer_cpu.py runs it on a staged CPU pair and on
// lavapipe (test_vulkan.py), and gpu_kit.py on the H200.
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --device=c=local[1] --iree-opt-const-eval=false -o %t.vmfb
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] --device=c=local[1] --iree-opt-const-eval=false -o %t.vulkan.vmfb
// The host waits before the GPU's alloca after the loop:
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --device=c=local[1] --iree-opt-const-eval=false --compile-to=stream -o - | FileCheck %s
// CHECK-LABEL: util.func public @p104(
// CHECK:         stream.resource.dealloca on(#hal.device.affinity<@a>) await(
// CHECK-NEXT:    util.optimization_barrier
// CHECK-NEXT:    %[[FENCE:.+]] = stream.timepoint.export %{{.+}} => (!hal.fence)
// CHECK-NEXT:    util.call @__mdc_host_await_other_driver(%[[FENCE]])
// CHECK-NEXT:    %[[NOW:.+]] = stream.timepoint.immediate
// CHECK-NEXT:    stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%[[NOW]])
func.func public @p104(
    %arg0: tensor<4x3x7xf32> {iree.abi.affinity = #hal.device.promise<@device_c>}
  ) -> (tensor<4x7xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<28x3xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<4x7x3xf32> {iree.abi.affinity = #hal.device.promise<@device_c>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %v1_e = tensor.empty() : tensor<4x7x3xf32>
  %v1 = linalg.transpose ins(%arg0 : tensor<4x3x7xf32>) outs(%v1_e : tensor<4x7x3xf32>) permutation = [0, 2, 1]
  %v2 = arith.constant dense<[[[-1.437500e+00, 6.875000e-01, 9.375000e-01], [8.125000e-01, -1.187500e+00, -9.375000e-01], [1.312500e+00, -0.000000e+00, -3.750000e-01], [-1.750000e+00, -9.375000e-01, -1.000000e+00], [-1.625000e+00, -3.750000e-01, 6.875000e-01], [-1.625000e+00, -5.625000e-01, -3.125000e-01], [1.187500e+00, 1.562500e+00, -5.625000e-01]], [[2.000000e+00, 1.062500e+00, -6.250000e-02], [-6.875000e-01, 1.875000e-01, -1.062500e+00], [-3.750000e-01, -1.187500e+00, 1.937500e+00], [3.750000e-01, -1.687500e+00, 1.250000e-01], [1.812500e+00, -8.750000e-01, 7.500000e-01], [-5.625000e-01, 1.187500e+00, 2.500000e-01], [-9.375000e-01, 1.187500e+00, -3.125000e-01]], [[-6.250000e-01, 5.000000e-01, -5.625000e-01], [4.375000e-01, 1.187500e+00, -6.250000e-01], [8.125000e-01, -5.625000e-01, -1.875000e+00], [-1.875000e-01, -1.437500e+00, 5.625000e-01], [-8.750000e-01, 6.875000e-01, -5.625000e-01], [-5.625000e-01, -7.500000e-01, 5.000000e-01], [-1.437500e+00, 1.000000e+00, 3.750000e-01]], [[1.687500e+00, 4.375000e-01, 1.875000e-01], [5.000000e-01, 8.125000e-01, -1.062500e+00], [-1.750000e+00, -1.687500e+00, -5.625000e-01], [-1.312500e+00, 3.750000e-01, 1.625000e+00], [-1.937500e+00, -1.375000e+00, 8.750000e-01], [1.125000e+00, 1.375000e+00, -6.250000e-02], [1.875000e-01, -1.062500e+00, 3.750000e-01]]]> : tensor<4x7x3xf32>
  %v4 = flow.tensor.transfer %v2 : tensor<4x7x3xf32> to #hal.device.promise<@device_c>
  %v5 = arith.subf %v1, %v4 : tensor<4x7x3xf32>
  %v6 = tensor.collapse_shape %v4 [[0, 1], [2]] : tensor<4x7x3xf32> into tensor<28x3xf32>
  %v8 = math.absf %v5 : tensor<4x7x3xf32>
  %v9_e = tensor.empty() : tensor<28x3xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v6 : tensor<28x3xf32>) outs(%v9_e : tensor<28x3xf32>) {
  ^bb0(%i0: f32, %o: f32):
    %s1 = arith.constant -2.500000e-01 : f32
    %s2 = arith.addf %i0, %s1 : f32
    linalg.yield %s2 : f32
  } -> tensor<28x3xf32>
  %v14_n = arith.constant 2 : index
  %v14 = scf.for %v14_iv = %c0 to %v14_n step %c1 iter_args(%acc10 = %v9) -> (tensor<28x3xf32>) {
    %v11 = flow.tensor.transfer %acc10 : tensor<28x3xf32> to #hal.device.promise<@device_b>
    %v12 = flow.tensor.transfer %v6 : tensor<28x3xf32> to #hal.device.promise<@device_b>
    %v13_e = tensor.empty() : tensor<28x3xf32>
    %v13 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v11, %v12 : tensor<28x3xf32>, tensor<28x3xf32>) outs(%v13_e : tensor<28x3xf32>) {
    ^bb0(%i0: f32, %i1: f32, %o: f32):
      %s1 = arith.addf %i1, %i0 : f32
      linalg.yield %s1 : f32
    } -> tensor<28x3xf32>
    scf.yield %v13 : tensor<28x3xf32>
  }
  %v15_e = tensor.empty() : tensor<28x3xf32>
  %v15 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v14 : tensor<28x3xf32>) outs(%v15_e : tensor<28x3xf32>) {
  ^bb0(%i0: f32, %o: f32):
    %s1 = arith.constant -5.000000e-01 : f32
    %s2 = arith.addf %i0, %s1 : f32
    linalg.yield %s2 : f32
  } -> tensor<28x3xf32>
  %v16_z = arith.constant 0.000000e+00 : f32
  %v16_e = tensor.empty() : tensor<4x7xf32>
  %v16_f = linalg.fill ins(%v16_z : f32) outs(%v16_e : tensor<4x7xf32>) -> tensor<4x7xf32>
  %v16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v4 : tensor<4x7x3xf32>) outs(%v16_f : tensor<4x7xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s1 = arith.addf %in, %acc : f32
    linalg.yield %s1 : f32
  } -> tensor<4x7xf32>
  return %v16, %v15, %v8 : tensor<4x7xf32>, tensor<28x3xf32>, tensor<4x7x3xf32>
}
