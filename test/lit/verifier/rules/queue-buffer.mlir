// Rule queue-buffer: IREE hands a device's queue a buffer allocated by a
// device it shares no memory with (a CPU buffer on a CUDA queue:
// CUDA_ERROR_INVALID_VALUE).
// Refused: the GPU's queue fills a buffer the CPU's queue allocated.
// Accepted: the GPU's queue fills a buffer of its own.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @gpu_fills_cpu_buffer
// OUT: @gpu_fills_own_buffer
// OUT-NOT: @gpu_fills_cpu_buffer

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @gpu_fills_cpu_buffer() {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %zero = arith.constant 0 : i32
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %buf = hal.device.queue.alloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: queue-buffer.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.fill' on device_b (cuda) uses a buffer allocated by device_a (local), memory device_b cannot access
    hal.device.queue.fill<%b : !hal.device> affinity(%any) wait(%none) signal(%f1) target(%buf : !hal.buffer)[%c0] length(%c16) pattern(%zero : i32) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair: cuda and local memories are incompatible
    // CHECK-NEXT: note: the buffer is allocated at {{.*}}queue-buffer.mlir:[[# @LINE - 5]]:12
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
  util.func public @gpu_fills_own_buffer() {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %zero = arith.constant 0 : i32
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %buf = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    hal.device.queue.fill<%b : !hal.device> affinity(%any) wait(%f0) signal(%f1) target(%buf : !hal.buffer)[%c0] length(%c16) pattern(%zero : i32) flags("None")
    util.return
  }
}
