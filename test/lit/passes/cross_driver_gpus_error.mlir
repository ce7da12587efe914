// GPUs of different drivers and no local device to stage through: an error at
// the crossing's source location that names the fix; exit status 1; no
// traceback; no IR for the failing inputs.
// RUN: (mdc-opt %s --pass=transfer-insertion --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
// Without --split-input-file the first input alone fails the same way.
// RUN: (mdc-opt %S/Inputs/cuda_hip_no_host.mlir --pass=transfer-insertion 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=WHOLE

module attributes {stream.affinity.default = #hal.device.affinity<@nv>} {
  util.global private @nv = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @amd = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @explicit_transfer(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@nv>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@nv>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    // CHECK: cross_driver_gpus_error.mlir:[[# @LINE + 1]]:10: error: values move between nv (cuda) and amd (hip), GPUs of different drivers, and the program declares no local device
    %y = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@nv>) -> to(#hal.device.affinity<@amd>) !stream.resource<*>{%size}
    // CHECK-NEXT: note: no stock HAL op copies between two drivers' memories
    // CHECK-NEXT: note: add one, e.g. --device=host=local[0]
    util.return %y : !stream.resource<*>
  }
}

// -----

// A module with both GPUs but no value moving between them is fine.
module attributes {stream.affinity.default = #hal.device.affinity<@nv>} {
  util.global private @nv = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @amd = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @no_crossing(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@amd>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@amd>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    util.return %x : !stream.resource<*>
  }
}
// CHECK-NOT: util.func public @explicit_transfer
// CHECK: util.func public @no_crossing(
// CHECK-NOT: __mdc_stage
// CHECK: rc=1

// WHOLE: cuda_hip_no_host.mlir:7:10: error: values move between nv (cuda) and amd (hip), GPUs of different drivers, and the program declares no local device
// WHOLE-NEXT: note: no stock HAL op copies between two drivers' memories
// WHOLE-NEXT: note: add one, e.g. --device=host=local[0] (the program need not use it)
// WHOLE-NOT: util.func
// WHOLE: rc=1
