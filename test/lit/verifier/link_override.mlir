// The verifier judges by the memory model with the --link overrides: two CPU
// devices share memory, unless --link=X:Y=staged makes them behave like a CPU
// and a discrete GPU (Y owning the staging memory), which is how CI covers
// the GPU code path.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=SHARED
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file --link=a:b=staged 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=STAGED
// SHARED-NOT: error
// SHARED: @select_two_cpus
// SHARED: @forced_staging_by_hand
// SHARED: @cpu_reads_other_cpu
// SHARED: rc=0

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @select_two_cpus() -> !hal.device {
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load @device_a : !hal.device
    %b = util.global.load @device_b : !hal.device
    // STAGED: link_override.mlir:[[# @LINE + 1]]:28: error: 'hal.allocator.select' makes one allocation serve device_a (local) and device_b (local), which do not share memory
    %selected, %affinity = hal.allocator.select from([(%a, %any : !hal.device, i64), (%b, %any : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    // STAGED-NEXT: note: device_a and device_b are a staged pair: forced by --link (owner device_b)
    util.return %selected : !hal.device
  }
}

// -----

// mdc's staging between the pair: accepted either way.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @forced_staging_by_hand() {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %device_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %on_a = hal.device.queue.alloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%device_type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %b_allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    %pinned = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%pinned_type) usage(%usage) : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) source(%on_a : !hal.buffer)[%c0] target(%pinned : !hal.buffer)[%c0] length(%c16) flags("None")
    %on_b = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%device_type) usage(%usage) : !hal.buffer{%c16}
    %f2 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%b : !hal.device> affinity(%any) wait(%none) signal(%f2) source(%pinned : !hal.buffer)[%c0] target(%on_b : !hal.buffer)[%c0] length(%c16) flags("None")
    util.return
  }
}

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @cpu_reads_other_cpu() {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %on_b = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    // STAGED: link_override.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.dealloca' on device_a (local) uses a device-local buffer allocated by device_b (local), memory device_a cannot access
    hal.device.queue.dealloca<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) buffer(%on_b : !hal.buffer) flags("None")
    util.return
  }
}
// Errors come first (stderr), then the accepted input.
// STAGED: @forced_staging_by_hand
// STAGED: rc=1
