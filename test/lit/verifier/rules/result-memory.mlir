// Rule result-memory: IREE folds an argument imported on one device and
// exported on another to the argument itself, so a result declared on a
// device can be memory it cannot access.
// Refused: the GPU's argument returned as it is as the CPU's result.
// Accepted: the same argument returned as the GPU's result.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @folded
// OUT: @kept_on_gpu
// OUT-NOT: @folded

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @folded(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @folded(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"}} {
    // CHECK: result-memory.mlir:[[# @LINE + 1]]:5: error: result 0 of @folded, declared on device_a (local), is argument 0, declared on device_b (cuda), returned as it is: memory device_a cannot access
    util.return %arg0 : !hal.buffer_view
    // CHECK-NEXT: note: device_a and device_b are a staged pair: local and cuda memories are incompatible
    // CHECK-NEXT: note: nothing moves it: the caller gets its own buffer back as device_a's result (IREE folds an import exported on another device)
  }
}
// CHECK-NOT: error:
// CHECK-NOT: more violation
// CHECK: rc=1

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @kept_on_gpu(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @kept_on_gpu(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})"}} {
    util.return %arg0 : !hal.buffer_view
  }
}
