// Regression, found by progen (seed 796175277 index 102, minimised): a value
// IREE folds to a constant (x - x) moved to device_b, and a result of it
// returned both on device_b and, with no transfer, on device_a. IREE hoists
// the constant into two globals, one stored through a move with no target
// (`from(device_a)`, the value made on device_b), which placement gave no
// destination, so the move was left to IREE: one allocation served both
// devices and the verifier refused the module ("'hal.allocator.select' makes
// one allocation serve device_a (local) and device_b (local)"). A global whose
// stored values have no home of their own now lives where its loads are used,
// and a move into it is a crossing into that home.
// (Without --iree-opt-const-eval=false stock IREE 3.13 crashes in its
// const-eval on this program first, as progen sees on many.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --iree-opt-const-eval=false -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --device=local-task --device=local-sync --input=4xi32=1,2,3,4 | FileCheck %s
// CHECK: 4xi32=0 0 0 0
// CHECK: 4xi32=0 0 0 0
// On Vulkan the verifier names 'hal.allocator.resolve_memory_properties'.
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] --iree-opt-const-eval=false -o %t/vulkan.vmfb
func.func public @f(%arg0: tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %zero = arith.subi %arg0, %arg0 : tensor<4xi32>
  %on_b = flow.tensor.transfer %zero : tensor<4xi32> to #hal.device.promise<@device_b>
  %sum = arith.addi %on_b, %on_b : tensor<4xi32>
  %again = flow.tensor.transfer %sum : tensor<4xi32> to #hal.device.promise<@device_b>
  return %again, %sum : tensor<4xi32>, tensor<4xi32>
}
