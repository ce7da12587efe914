// --link mistakes: a message naming the problem, no traceback; exit status 2
// for a malformed --link, 1 for one the memory model refuses.
// With --split-input-file the failing input is reported and the others still
// run (the second input here is fine and is printed).
//
// =shared on a CPU + GPU pair is impossible, in either spelling and order.
// RUN: (mdc-opt %s --pass=transfer-insertion --split-input-file --link=a:b=shared 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=SHARED
// RUN: (mdc-opt %s --pass=transfer-insertion --split-input-file --link=device_b:device_a=shared 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=SHARED2
// SHARED: mdc-opt: error: --link=a:b=shared is impossible: device_a (local) and device_b (cuda) cannot address each other's memory
// SHARED-NEXT: note: {{.*}}CUDA_ERROR_INVALID_VALUE
// SHARED-NEXT: note: leave the pair staged, or force staging with =staged
// SHARED-NOT: __mdc_stage
// SHARED: util.func public @still_runs(
// SHARED-NOT: __mdc_stage
// SHARED: rc=1
// SHARED2: mdc-opt: error: --link=device_b:device_a=shared is impossible: device_a (local) and device_b (cuda) cannot address each other's memory
// SHARED2: rc=1
//
// Without --split-input-file the whole run fails and prints no IR.
// RUN: (mdc-opt %S/Inputs/local_cuda_transfer.mlir --pass=transfer-insertion --link=a:b=shared 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=WHOLE
// WHOLE: mdc-opt: error: --link=a:b=shared is impossible
// WHOLE-NOT: util.func
// WHOLE: rc=1
//
// Malformed flags and unknown names.
// RUN: (mdc-opt %S/Inputs/local_cuda_transfer.mlir --pass=transfer-insertion --link=a-b 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: mdc-opt: error: --link=a-b: expected X:Y=staged or X:Y=shared
// SYNTAX-NOT: util.func
// SYNTAX: rc=2
// RUN: (mdc-opt %S/Inputs/local_cuda_transfer.mlir --pass=transfer-insertion --link=a:z=staged 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=NAME
// NAME: mdc-opt: error: --link=a:z=staged: {{.*}}'z'
// NAME-NOT: util.func
// NAME: rc=2
// RUN: (mdc-opt %S/Inputs/local_cuda_transfer.mlir --pass=transfer-insertion --link=a:a=staged 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=SELF
// SELF: mdc-opt: error: --link=a:a=staged: a device cannot link to itself
// SELF: rc=2
// RUN: (mdc-opt %S/Inputs/local_cuda_transfer.mlir --pass=transfer-insertion --link=a:b=staged --link=b:a=shared 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: mdc-opt: error: --link=b:a=shared contradicts an earlier --link for the pair device_b, device_a
// CONFLICT: rc=2

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @refused(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
}

// -----

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @still_runs(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
}
