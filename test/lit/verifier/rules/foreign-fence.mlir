// Rule foreign-fence: IREE lets a GPU queue wait on a fence created on
// another driver's device, a semaphore that queue cannot wait on: it never
// runs (a real GPU hangs).
// Refused: the GPU's queue waits on the CPU's fence. Accepted: the other
// way round, the CPU's queue waits on the GPU's fence.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @gpu_waits_on_cpu
// OUT: @cpu_waits_on_gpu
// OUT-NOT: @gpu_waits_on_cpu

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @gpu_waits_on_cpu() {
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.barrier<%a : !hal.device> affinity(%any) wait(%none) signal(%f0) flags("None")
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: foreign-fence.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.barrier' on device_b (cuda) waits on a fence created on device_a (local), a device of another driver
    hal.device.queue.barrier<%b : !hal.device> affinity(%any) wait(%f0) signal(%f1) flags("None")
    // CHECK-NEXT: note: a GPU queue told to wait on another driver's semaphore never runs; wait on the host at such boundaries
    // CHECK-NEXT: note: the fence is created at {{.*}}foreign-fence.mlir:[[# @LINE - 6]]:11
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
  util.func public @cpu_waits_on_gpu() {
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    hal.device.queue.barrier<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) flags("None")
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.barrier<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) flags("None")
    util.return
  }
}
