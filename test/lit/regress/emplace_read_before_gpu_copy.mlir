// Found on the H200 (gpu_random seed 20261201 index 247, and
// test/e2e/gpu_staging_ab.py): with --staging=emplace, a result computed on
// CPU device_c, moved to the GPU and declared on device_c again came back as
// zeros, in both execution models; --staging=copy was right. The GPU's copy
// into pinned memory is a call that returns nothing, and the CPU's import
// of the pinned view has no side effects: IREE's stream scheduling put the
// CPU's copy out of pinned memory (and the host's wait for it) before the
// GPU's copy into it. Every view a device reads after the host waited for
// a write now comes out of the helper that waited, as a new view, so the
// import depends on the call (staging_template.await_view_function_text).
// CPU pairs never take this path (a CPU source writes pinned memory in its
// own submission), so only the order in the IR shows it here. The value
// coming back has a size IREE knows only at run time here, so the GPU now
// writes it into pinned memory itself (a value known at compile time and
// above 64 KiB keeps the queue copy: test/lit/passes/staging_emplace.mlir
// checks that import's order); either way device_c imports only the view
// that the host's wait for the GPU returns.
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --device=c=local[1] --staging=emplace --no-host-entry-points --iree-opt-const-eval=false --compile-to=stream -o - | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --device=c=local[1] --staging=emplace --no-host-entry-points --iree-opt-const-eval=false --iree-execution-model=async-external --compile-to=stream -o - | FileCheck %s
// CHECK-LABEL: util.func public @p247(
// The CPU's writes reach the GPU only after the host waited for them:
// CHECK:      %[[A:.+]] = util.call @__mdc_stage_await_view(
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_b>) %[[A]]
// The GPU's write into pinned memory comes before device_c reads it:
// CHECK:      stream.tensor.import on(#hal.device.affinity<@device_b>) consume %[[P:[^ ]+]] :
// CHECK:      %[[W:.+]] = util.call @__mdc_stage_await_view(%{{.+}}, %[[P]])
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_c>) %[[W]]
// CHECK:      __mdc_copy_on_device_c
// CHECK:      util.return
func.func public @p247(
    %arg0: tensor<1x4xi32> {iree.abi.affinity = #hal.device.promise<@device_c>},
    %arg1: tensor<?x5xi32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %arg2: tensor<4x7xi32> {iree.abi.affinity = #hal.device.promise<@device_c>},
    %arg3: tensor<?x7xi32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %arg4: tensor<1x?xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<1x7xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}, tensor<7x1xi32> {iree.abi.affinity = #hal.device.promise<@device_c>}, tensor<1x7xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<1x7xi32> {iree.abi.affinity = #hal.device.promise<@device_c>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %arg1, %c0 : tensor<?x5xi32>
  %d10 = tensor.dim %arg3, %c0 : tensor<?x7xi32>
  %d18 = tensor.dim %arg4, %c1 : tensor<1x?xi32>
  %v2_z = arith.constant 0 : i32
  %v2_e = tensor.empty() : tensor<1x7xi32>
  %v2_f = linalg.fill ins(%v2_z : i32) outs(%v2_e : tensor<1x7xi32>) -> tensor<1x7xi32>
  %v2 = linalg.matmul ins(%arg0, %arg2 : tensor<1x4xi32>, tensor<4x7xi32>) outs(%v2_f : tensor<1x7xi32>) -> tensor<1x7xi32>
  %v3_e = tensor.empty() : tensor<1x7xi32>
  %v3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v2 : tensor<1x7xi32>) outs(%v3_e : tensor<1x7xi32>) {
  ^bb0(%i0: i32, %o: i32):
    %s1 = arith.constant 5 : i32
    %s2 = arith.addi %i0, %s1 : i32
    linalg.yield %s2 : i32
  } -> tensor<1x7xi32>
  %v8_n = arith.constant 1 : index
  %v8 = scf.for %v8_iv = %c0 to %v8_n step %c1 iter_args(%acc4 = %v3) -> (tensor<1x7xi32>) {
    %v5 = flow.tensor.transfer %acc4 : tensor<1x7xi32> to #hal.device.promise<@device_a>
    %v6_k1 = arith.constant dense<-2> : tensor<1x7xi32>
    %v6 = arith.ori %v5, %v6_k1 : tensor<1x7xi32>
    %v7 = flow.tensor.transfer %v6 : tensor<1x7xi32> to #hal.device.promise<@device_c>
    scf.yield %v7 : tensor<1x7xi32>
  }
  %v9_e = tensor.empty() : tensor<1x7xi32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v8 : tensor<1x7xi32>) outs(%v9_e : tensor<1x7xi32>) {
  ^bb0(%i0: i32, %o: i32):
    %s1 = arith.constant -3 : i32
    %s2 = arith.addi %i0, %s1 : i32
    linalg.yield %s2 : i32
  } -> tensor<1x7xi32>
  %v11 = flow.tensor.transfer %arg3 : tensor<?x7xi32>{%d10} to #hal.device.promise<@device_c>
  %v12 = tensor.cast %v11 : tensor<?x7xi32> to tensor<1x7xi32>
  %v13 = arith.xori %v2, %v12 : tensor<1x7xi32>
  %v14 = flow.tensor.transfer %v9 : tensor<1x7xi32> to #hal.device.promise<@device_b>
  %v15 = arith.maxsi %v2, %v9 : tensor<1x7xi32>
  %v16 = flow.tensor.transfer %v13 : tensor<1x7xi32> to #hal.device.promise<@device_b>
  %v17_e = tensor.empty() : tensor<7x1xi32>
  %v17 = linalg.transpose ins(%v2 : tensor<1x7xi32>) outs(%v17_e : tensor<7x1xi32>) permutation = [1, 0]
  %v19 = tensor.cast %arg4 : tensor<1x?xi32> to tensor<1x7xi32>
  %v20 = arith.minsi %v16, %v19 : tensor<1x7xi32>
  return %v20, %v17, %v15, %v14 : tensor<1x7xi32>, tensor<7x1xi32>, tensor<1x7xi32>, tensor<1x7xi32>
}
