// Rule caller-fence: With async-external, IREE lets a GPU queue wait on the
// fence the caller passed in, which may be another driver's semaphore.
// Refused: the GPU's queue waits on the caller's fence. Accepted: the CPU's
// queue waits on it (a CPU queue may wait on any fence).
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @gpu_waits_on_caller
// OUT: @cpu_waits_on_caller
// OUT-NOT: @gpu_waits_on_caller

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @gpu_waits_on_caller(%wait: !hal.fence, %signal: !hal.fence) {
    %any = arith.constant -1 : i64
    %b = util.global.load immutable @device_b : !hal.device
    // CHECK: caller-fence.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.barrier' on device_b (cuda) waits on the caller's fence, which may belong to another driver's device
    hal.device.queue.barrier<%b : !hal.device> affinity(%any) wait(%wait) signal(%signal) flags("None")
    // CHECK-NEXT: note: in a program whose devices do not all share memory, await the caller's fence on the host (mdc's host-fences pass) before any GPU queue work
    // CHECK-NEXT: note: a GPU queue told to wait on another driver's semaphore never runs
    util.return
  }
}
// CHECK-NOT: error:
// CHECK-NOT: more violation
// CHECK: rc=1

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @cpu_waits_on_caller(%wait: !hal.fence, %signal: !hal.fence) {
    %any = arith.constant -1 : i64
    %a = util.global.load immutable @device_a : !hal.device
    hal.device.queue.barrier<%a : !hal.device> affinity(%any) wait(%wait) signal(%signal) flags("None")
    util.return
  }
}
