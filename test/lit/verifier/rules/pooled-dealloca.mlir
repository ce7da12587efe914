// Rule pooled-dealloca: IREE puts a dealloca with no affinity on the default
// device, and without PreferOrigin that queue would return another device's
// pooled memory.
// Refused: the CPU's queue deallocates the GPU's queue-allocated buffer.
// Accepted: the same with flags(PreferOrigin), which the runtime performs on
// the device that allocated the buffer.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @cpu_returns_gpu_pool
// OUT: @cpu_names_gpu_origin
// OUT-NOT: @cpu_returns_gpu_pool

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @cpu_returns_gpu_pool() {
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %buf = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    // CHECK: pooled-dealloca.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.dealloca' on device_a (local) uses a device-local buffer allocated by device_b (cuda), memory device_a cannot access
    hal.device.queue.dealloca<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) buffer(%buf : !hal.buffer) flags("None")
    // CHECK-NEXT: note: device_a and device_b are a staged pair: local and cuda memories are incompatible
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
  util.func public @cpu_names_gpu_origin() {
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %buf = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.dealloca<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) buffer(%buf : !hal.buffer) flags(PreferOrigin)
    util.return
  }
}
