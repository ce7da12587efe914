// Fixed (residence.py, Residence.transfer_source; the same change as
// reshape_folded_into_producer_on_other_device.mlir): found by the random
// programs in CI (test/e2e/progen.py, seed 796026559 index 25; the program
// as generated). Forced staging between three CPU devices, async-external:
// the verifier rejected mdc's own output:
//   error: 'hal.command_buffer.copy_buffer' in a command buffer on device_a
//   (local) uses a device-local buffer allocated by device_b (local), memory
//   device_a cannot access
// with both --staging lowerings. It compiles since mdc takes a moved value's
// source from the device that made it rather than from IREE's label.
// Stock IREE (all-local, async-external) prints the results checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=a:b=staged --link=a:c=staged --link=b:c=staged --iree-execution-model=async-external -o %t/emplace.vmfb
// RUN: mdc-run --module=%t/emplace.vmfb --device=local-task --device=local-sync --device=local-task --input=4xf32=1.5,-2.25,3,0.75 --input=4xf16=0.6875,0.4375,-1.1875,1 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=a:b=staged --link=a:c=staged --link=b:c=staged --iree-execution-model=async-external --staging=copy -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync --device=local-task --input=4xf32=1.5,-2.25,3,0.75 --input=4xf16=0.6875,0.4375,-1.1875,1 | FileCheck %s
// CHECK: 1xf32=3
// CHECK: 4x4xf16=[0 0 0 0][0 0 0 0][0 0 0 0][0 0 0 0]
// CHECK: 4xf16=0 0 0 0
// CHECK: 4xf32=0 0 0 0

func.func public @p25(
    %arg0: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %arg1: tensor<4xf16> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<1xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, tensor<4x?xf16> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<?xf16> {iree.abi.affinity = #hal.device.promise<@device_a>}, tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %arg0, %c0 : tensor<?xf32>
  %v2 = flow.tensor.transfer %arg0 : tensor<?xf32>{%d1} to #hal.device.promise<@device_c>
  %v3 = flow.tensor.transfer %v2 : tensor<?xf32>{%d1} to #hal.device.promise<@device_a>
  %v4 = arith.subf %v2, %arg0 : tensor<?xf32>
  %v5 = tensor.cast %v4 : tensor<?xf32> to tensor<4xf32>
  %v6_e = tensor.empty(%d1) : tensor<?xf16>
  %v6 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v4 : tensor<?xf32>) outs(%v6_e : tensor<?xf16>) {
  ^bb0(%i0: f32, %o: f16):
    %s1 = arith.truncf %i0 : f32 to f16
    linalg.yield %s1 : f16
  } -> tensor<?xf16>
  %v7_e = tensor.empty(%d1) : tensor<?xf16>
  %v7 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v6 : tensor<?xf16>) outs(%v7_e : tensor<?xf16>) {
  ^bb0(%i0: f16, %o: f16):
    %s1 = arith.negf %i0 : f16
    %s2 = math.absf %s1 : f16
    linalg.yield %s2 : f16
  } -> tensor<?xf16>
  %v8_e = tensor.empty(%d1) : tensor<?xf16>
  %v8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v7 : tensor<?xf16>) outs(%v8_e : tensor<?xf16>) {
  ^bb0(%i0: f16, %o: f16):
    %s1 = arith.addf %i0, %i0 : f16
    linalg.yield %s1 : f16
  } -> tensor<?xf16>
  %v9 = tensor.expand_shape %v3 [[0, 1]] output_shape [%d1, 1] : tensor<?xf32> into tensor<?x1xf32>
  %v10_e = tensor.empty(%d1) : tensor<4x?xf16>
  %v10 = linalg.broadcast ins(%v7 : tensor<?xf16>) outs(%v10_e : tensor<4x?xf16>) dimensions = [0]
  %v11_z = arith.constant 0.000000e+00 : f32
  %v11_e = tensor.empty() : tensor<1xf32>
  %v11_f = linalg.fill ins(%v11_z : f32) outs(%v11_e : tensor<1xf32>) -> tensor<1xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%v9 : tensor<?x1xf32>) outs(%v11_f : tensor<1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s1 = arith.addf %in, %acc : f32
    linalg.yield %s1 : f32
  } -> tensor<1xf32>
  return %v11, %v10, %v8, %v5 : tensor<1xf32>, tensor<4x?xf16>, tensor<?xf16>, tensor<4xf32>
}
