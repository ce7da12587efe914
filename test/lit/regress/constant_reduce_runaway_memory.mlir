// Fixed (transfer_insertion.py): found by the
// random program generator (test/e2e/progen.py, seed 3 index 2, minimised).
// A 5x5 constant moved to device_b, reduced there, and one elementwise op
// (a linalg.generic; the same op written as arith.addf on tensors compiles)
// returned on device_b. With --iree-opt-const-eval=false, mdc-compile for
// --device=b=cuda[0], or local[1] with --link=a:b=staged, grows without
// bound in the `stream` stage (IREE's async/cmd pipelines run on mdc's
// output): 24 GB and the OOM killer in CI; under a 3 GB ulimit,
// "terminate called after throwing an instance of 'std::bad_alloc'" and
//   mdc-compile: error: IREE's compiler crashed (signal 6) ...
//   note: crashes seen so far come from constant evaluation of initializers:
//   try --iree-opt-const-eval=false
// (which is already given). --compile-to=mdc finishes; --compile-to=stream
// does not. Stock iree-compile (all-local) takes 0.6 s and 150 MB; mdc
// without staging (local[1], no --link) too. With const-eval on, IREE
// 3.13.0 itself segfaults in JitGlobals (stock too).
// Cause: IREE hoists the elementwise op into an initializer on the default
// device (a), so the value crosses b -> a -> b there; mdc cast the imported
// (external) value to the `constant` lifetime, and IREE's usage refinement
// (iree-stream-refine-usage) then grows without bound. mdc now produces
// constants with a same-device transfer, as it does staging resources.
// Expected: compiles in seconds and prints 5xf32=5.75 5.75 5.75 5.75 6.75.
// (The ulimit keeps a regression from taking the machine down.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: ulimit -v 4000000 && mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --iree-opt-const-eval=false -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --device=local-task --device=local-sync | FileCheck %s
// RUN: ulimit -v 4000000 && mdc-compile %s --device=a=local[0] --device=b=cuda[0] --iree-opt-const-eval=false -o %t/cuda.vmfb
// CHECK: 5xf32=5.75 5.75 5.75 5.75 6.75

func.func public @constant_reduced_on_b()
    -> (tensor<5xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %k = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 6.0]]> : tensor<5x5xf32>
  %kb = flow.tensor.transfer %k : tensor<5x5xf32> to #hal.device.promise<@device_b>
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<5xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
  %max = linalg.reduce ins(%kb : tensor<5x5xf32>) outs(%init : tensor<5xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %e2 = tensor.empty() : tensor<5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%max : tensor<5xf32>) outs(%e2 : tensor<5xf32>) {
  ^bb0(%i: f32, %o: f32):
    %c = arith.constant 7.500000e-01 : f32
    %s = arith.addf %c, %i : f32
    linalg.yield %s : f32
  } -> tensor<5xf32>
  return %r : tensor<5xf32>
}
