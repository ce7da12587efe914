// PENDING (IREE 3.13.0's cuda codegen, triggered by mdc's staging): found by
// the GPU random programs (test/e2e/gpu_random.py build, seed 20261130
// index 111; the program as generated). A value on device_c goes to
// device_a and back; after staging both moves, the elementwise maxsi of the
// argument and the round-tripped value reads two resources that IREE later
// proves equal and folds into one binding, and cuda codegen then fails:
//   mdc-compile: error: loc(unknown): LLVM Translation failed for operation:
//   builtin.unrealized_conversion_cast
// (in p111_dispatch_0_elementwise_D_i32, workgroup size 1x1x1). Stock
// iree-compile of the same computation written directly (maxsi(x, x) on
// one cuda device) folds the op earlier and compiles; the staged CPU pair
// compiles and runs right. Not yet minimised to a stock reproducer.
// Expected: compiles for cuda.
// XFAIL: *
// RUN: mdc-compile %s --device=a=local[0] --device=c=cuda[0] --iree-llvmcpu-target-cpu=generic --iree-opt-const-eval=false -o %t.vmfb
func.func public @p111(
    %arg0: tensor<5x?xi32> {iree.abi.affinity = #hal.device.promise<@device_c>}
  ) -> (tensor<5x5x?xi32> {iree.abi.affinity = #hal.device.promise<@device_c>}, tensor<5x?xi32> {iree.abi.affinity = #hal.device.promise<@device_c>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %arg0, %c1 : tensor<5x?xi32>
  %v2 = flow.tensor.transfer %arg0 : tensor<5x?xi32>{%d1} to #hal.device.promise<@device_a>
  %v3 = flow.tensor.transfer %v2 : tensor<5x?xi32>{%d1} to #hal.device.promise<@device_c>
  %v4 = arith.maxsi %arg0, %v3 : tensor<5x?xi32>
  %v5_e = tensor.empty(%d1) : tensor<5x5x?xi32>
  %v5 = linalg.broadcast ins(%v3 : tensor<5x?xi32>) outs(%v5_e : tensor<5x5x?xi32>) dimensions = [0]
  return %v5, %v4 : tensor<5x5x?xi32>, tensor<5x?xi32>
}
