// Regression, found while adding a reader of its state to running_sum.mlir
// (fifteenth session): a mutable global that one function stores on device_b
// and another loads and returns on device_a. The host twin @accumulate$host
// both returns the new sum and stores it; IREE writes the store's value as a
// move with no target (`from(device_a)`, the value made on device_b), and a
// store did not count as a consumer, so the move was left to IREE, which
// allocated it for both devices: the verifier refused the module
// ("'hal.allocator.select' makes one allocation serve device_a (local) and
// device_b (local)"). A store now consumes its value where the global lives.
// The state across calls is checked by test/e2e/test_global_state.py.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --function=current --device=local-task --device=local-sync | FileCheck %s --check-prefix=CURRENT
// CURRENT: 4xf32=0 0 0 0
// RUN: mdc-run --module=%t/staged.vmfb --function=accumulate --device=local-task --device=local-sync --input=4xf32=1,2,3,4 | FileCheck %s --check-prefix=SUM
// SUM: 4xf32=1 2 3 4
// On a device with memory of its own the verifier checks the staging.
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] -o %t/vulkan.vmfb
util.global private mutable @sum = dense<0.0> : tensor<4xf32>

func.func public @accumulate(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %s = util.global.load @sum : tensor<4xf32>
  %s_b = flow.tensor.transfer %s : tensor<4xf32> to #hal.device.promise<@device_b>
  %n = arith.addf %s_b, %x : tensor<4xf32>
  util.global.store %n, @sum : tensor<4xf32>
  return %n : tensor<4xf32>
}

func.func public @current() -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %s = util.global.load @sum : tensor<4xf32>
  return %s : tensor<4xf32>
}
