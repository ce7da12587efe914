// Rule command-buffer-buffer: IREE records into one device's command buffer
// a copy, fill or dispatch of a buffer allocated by a device it shares no
// memory with.
// Refused: a command buffer recorded for the GPU copies from a CPU buffer.
// Accepted: the same copy from a buffer of the GPU's allocator.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @gpu_records_cpu_copy
// OUT: @gpu_records_own_copy
// OUT-NOT: @gpu_records_cpu_copy

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @gpu_records_cpu_copy() -> !hal.command_buffer {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %a_allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    %b_allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    %x = hal.allocator.allocate<%a_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
    %y = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
    %cmd = hal.command_buffer.create device(%b : !hal.device) mode(OneShot) categories("Transfer|Dispatch") affinity(%any) : !hal.command_buffer
    // CHECK: command-buffer-buffer.mlir:[[# @LINE + 1]]:5: error: 'hal.command_buffer.copy_buffer' in a command buffer on device_b (cuda) uses a buffer allocated by device_a (local), memory device_b cannot access
    hal.command_buffer.copy_buffer<%cmd : !hal.command_buffer> source(%x : !hal.buffer)[%c0] target(%y : !hal.buffer)[%c0] length(%c16) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair: cuda and local memories are incompatible
    // CHECK-NEXT: note: the buffer is allocated at {{.*}}command-buffer-buffer.mlir:[[# @LINE - 6]]:10
    hal.command_buffer.finalize<%cmd : !hal.command_buffer>
    util.return %cmd : !hal.command_buffer
  }
}
// CHECK-NOT: error:
// CHECK-NOT: more violation
// CHECK: rc=1

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @gpu_records_own_copy() -> !hal.command_buffer {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %b = util.global.load immutable @device_b : !hal.device
    %b_allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    %x = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
    %y = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
    %cmd = hal.command_buffer.create device(%b : !hal.device) mode(OneShot) categories("Transfer|Dispatch") affinity(%any) : !hal.command_buffer
    hal.command_buffer.copy_buffer<%cmd : !hal.command_buffer> source(%x : !hal.buffer)[%c0] target(%y : !hal.buffer)[%c0] length(%c16) flags("None")
    hal.command_buffer.finalize<%cmd : !hal.command_buffer>
    util.return %cmd : !hal.command_buffer
  }
}
