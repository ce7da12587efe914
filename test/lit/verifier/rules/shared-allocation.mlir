// Rule shared-allocation: IREE selects one allocator for a value used on
// several devices and allocates one buffer for them all, memory that a
// staged pair does not have.
// Refused: one selection over a CPU and a GPU. Accepted: the same selection
// over two CPUs, which share memory, in a module that also has the GPU.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @select_cpu_gpu
// OUT: @select_two_cpus
// OUT-NOT: @select_cpu_gpu

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @device_c = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @select_cpu_gpu() -> !hal.device {
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    // CHECK: shared-allocation.mlir:[[# @LINE + 1]]:28: error: 'hal.allocator.select' makes one allocation serve device_a (local) and device_b (cuda), which do not share memory
    %selected, %affinity = hal.allocator.select from([(%a, %any : !hal.device, i64), (%b, %any : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    // CHECK-NEXT: note: device_a and device_b are a staged pair: local and cuda memories are incompatible
    // CHECK-NEXT: note: a buffer allocated for both is handed to a device that cannot address it
    util.return %selected : !hal.device
  }
}
// CHECK-NOT: error:
// CHECK-NOT: more violation
// CHECK: rc=1

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @device_c = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @select_two_cpus() -> !hal.device {
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %c = util.global.load immutable @device_c : !hal.device
    %selected, %affinity = hal.allocator.select from([(%a, %any : !hal.device, i64), (%c, %any : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.return %selected : !hal.device
  }
}
