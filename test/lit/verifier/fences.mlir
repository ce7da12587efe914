// Rules foreign-fence and caller-fence: in a program with a staged pair, no GPU queue operation waits on a
// fence created on a device of another driver (a CUDA queue told to wait on
// a local-task semaphore never runs), directly or through hal.fence.join,
// nor on a fence the caller passed in (async-external). A CPU queue may wait
// on anything; programs whose devices all share memory keep IREE's behaviour.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; echo "rc=$?") | FileCheck %s --check-prefix=OUT

// Accepted: the CPU's queue waits on the GPU's fence and on the caller's; the
// GPU waits on nothing the host has not already seen (mdc's host-fences).
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // OUT-LABEL: util.func public @cpu_waits_on_anything(
  util.func public @cpu_waits_on_anything(%wait: !hal.fence, %signal: !hal.fence) {
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %forever = arith.constant -1 : i32
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %status = hal.fence.await until([%wait]) timeout_millis(%forever) flags("None") : i32
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %on_b = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %on_a = hal.device.queue.alloca<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %both = hal.fence.join at([%f1, %wait]) flags("None") -> !hal.fence
    hal.device.queue.barrier<%a : !hal.device> affinity(%any) wait(%both) signal(%signal) flags("None")
    util.return
  }
}

// -----

// Accepted: two CUDA devices and no CPU share memory, so IREE's own use of
// the caller's fence on a GPU queue stands.
module {
  util.global private @device_a = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 1 : index}> : !hal.device
  // OUT-LABEL: util.func public @cuda_pair(
  util.func public @cuda_pair(%wait: !hal.fence, %signal: !hal.fence) {
    %any = arith.constant -1 : i64
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.barrier<%a : !hal.device> affinity(%any) wait(%wait) signal(%f0) flags("None")
    hal.device.queue.barrier<%b : !hal.device> affinity(%any) wait(%f0) signal(%signal) flags("None")
    util.return
  }
}

// -----

// Accepted: with a CPU in the program, one CUDA device may still wait on
// another CUDA device's fence: one driver.
module {
  util.global private @host = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu0 = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu1 = #hal.device.target<"cuda", {ordinal = 1 : index}> : !hal.device
  // OUT-LABEL: util.func public @same_driver(
  util.func public @same_driver() {
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %g0 = util.global.load immutable @gpu0 : !hal.device
    %g1 = util.global.load immutable @gpu1 : !hal.device
    %f0 = hal.fence.create device(%g0 : !hal.device) flags("None") : !hal.fence
    hal.device.queue.barrier<%g0 : !hal.device> affinity(%any) wait(%none) signal(%f0) flags("None")
    %f1 = hal.fence.create device(%g1 : !hal.device) flags("None") : !hal.fence
    hal.device.queue.barrier<%g1 : !hal.device> affinity(%any) wait(%f0) signal(%f1) flags("None")
    util.return
  }
}

// -----

// Rejected: the GPU's queue waits on the CPU's fence.
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
    // CHECK: fences.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.barrier' on device_b (cuda) waits on a fence created on device_a (local), a device of another driver
    hal.device.queue.barrier<%b : !hal.device> affinity(%any) wait(%f0) signal(%f1) flags("None")
    // CHECK-NEXT: note: a GPU queue told to wait on another driver's semaphore never runs; wait on the host at such boundaries
    // CHECK-NEXT: note: the fence is created at {{.*}}fences.mlir:[[# @LINE - 6]]:11
    // CHECK-NOT: note:
    util.return
  }
}

// -----

// Rejected: the same through hal.fence.join.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @gpu_waits_on_joined() {
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %fa = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %fb = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %joined = hal.fence.join at([%fb, %fa]) flags("None") -> !hal.fence
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: fences.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.barrier' on device_b (hip) waits on a fence created on device_a (local), a device of another driver
    hal.device.queue.barrier<%b : !hal.device> affinity(%any) wait(%joined) signal(%f1) flags("None")
    util.return
  }
}

// -----

// Rejected: async-external, the GPU's queue waits on the caller's fence.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @gpu_waits_on_caller(%wait: !hal.fence, %signal: !hal.fence) {
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %b = util.global.load immutable @device_b : !hal.device
    // CHECK: fences.mlir:[[# @LINE + 1]]:13: error: 'hal.device.queue.alloca' on device_b (cuda) waits on the caller's fence, which may belong to another driver's device
    %on_b = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%wait) signal(%signal) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    // CHECK-NEXT: note: in a program whose devices do not all share memory, await the caller's fence on the host
    // CHECK-NEXT: note: a GPU queue told to wait on another driver's semaphore never runs
    util.return
  }
}

// -----

// Rejected: a fence passed to a helper that waits on it on the GPU; only the
// call that passes a CPU fence is wrong, and the error is inside the helper.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func private @gpu_after(%ready: !hal.fence) -> !hal.fence {
    %any = arith.constant -1 : i64
    %b = util.global.load immutable @device_b : !hal.device
    %done = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: fences.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.barrier' on device_b (cuda) waits on a fence created on device_a (local), a device of another driver
    hal.device.queue.barrier<%b : !hal.device> affinity(%any) wait(%ready) signal(%done) flags("None")
    // CHECK-NEXT: note: a GPU queue told
    // CHECK-NEXT: note: the fence is created at {{.*}}fences.mlir:[[# @LINE + 10]]:11
    // CHECK-NOT: note:
    util.return %done : !hal.fence
  }
  util.func public @helper_waits(%n: index) {
    %none = util.null : !hal.fence
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %fb = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %ok = util.call @gpu_after(%fb) : (!hal.fence) -> !hal.fence
    %fa = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %bad = util.call @gpu_after(%fa) : (!hal.fence) -> !hal.fence
    util.return
  }
}

// CHECK: rc=1
// OUT-NOT: @gpu_waits_on_cpu
// OUT-NOT: @gpu_waits_on_joined
// OUT-NOT: @gpu_waits_on_caller
// OUT-NOT: @helper_waits
// OUT: rc=1
