// Rules queue-buffer and command-buffer-buffer: no queue operation or command buffer of a device uses a buffer in
// memory that device cannot access. A device's own buffers, buffers of a
// device sharing its memory, and (for a CPU) host-visible buffers of any
// allocator are fine. Origins are followed through buffer views, calls,
// globals and block arguments; a buffer of unknown origin is never an error.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; echo "rc=$?") | FileCheck %s --check-prefix=OUT

// Accepted: mdc's staging by hand. The CPU copies its buffer into pinned
// memory of the GPU's allocator; the GPU copies that into its own memory.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // OUT-LABEL: util.func public @staged_by_hand(
  util.func public @staged_by_hand() {
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
    %f2 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %on_b = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%device_type) usage(%usage) : !hal.buffer{%c16}
    hal.device.queue.copy<%b : !hal.device> affinity(%any) wait(%none) signal(%f2) source(%pinned : !hal.buffer)[%c0] target(%on_b : !hal.buffer)[%c0] length(%c16) flags("None")
    util.return
  }
}

// -----

// Accepted: an argument imported on the GPU (its hal.buffer.assert names the
// GPU's allocator) used by the GPU, and an argument of unknown origin.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // OUT-LABEL: util.func public @arguments_on_b(
  util.func public @arguments_on_b(%declared: !hal.buffer_view, %unknown: !hal.buffer) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %b = util.global.load immutable @device_b : !hal.device
    %buffer = hal.buffer_view.buffer<%declared : !hal.buffer_view> : !hal.buffer
    %b_allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    hal.buffer.assert<%buffer : !hal.buffer> message("input0") allocator(%b_allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) source(%buffer : !hal.buffer)[%c0] target(%unknown : !hal.buffer)[%c0] length(%c16) flags("None")
    util.return
  }
}

// -----

// Accepted: an argument imported on the CPU that the module records as given
// in the GPU's pinned memory (mdc.pinned_arguments, --pinned-arguments) is
// host-visible memory of the GPU: the GPU copies it, the CPU reads it.
module attributes {mdc.pinned_arguments = {pinned_argument = {"0" = "device_b"}}} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // OUT-LABEL: util.func public @pinned_argument(
  util.func public @pinned_argument(%arg: !hal.buffer_view) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %x = hal.buffer_view.buffer<%arg : !hal.buffer_view> : !hal.buffer
    %a_allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    hal.buffer.assert<%x : !hal.buffer> message("input0") allocator(%a_allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %on_b = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%b : !hal.device> affinity(%any) wait(%f0) signal(%f1) source(%x : !hal.buffer)[%c0] target(%on_b : !hal.buffer)[%c0] length(%c16) flags("None")
    %f2 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %on_a = hal.device.queue.alloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f2) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f3 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%a : !hal.device> affinity(%any) wait(%f2) signal(%f3) source(%x : !hal.buffer)[%c0] target(%on_a : !hal.buffer)[%c0] length(%c16) flags("None")
    util.return
  }
}

// -----

// Rejected: the record covers argument 0 only; argument 1 is the CPU's.
module attributes {mdc.pinned_arguments = {other_argument_on_gpu = {"0" = "device_b"}}} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @other_argument_on_gpu(%pinned: !hal.buffer_view, %arg: !hal.buffer_view) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %x = hal.buffer_view.buffer<%arg : !hal.buffer_view> : !hal.buffer
    %a_allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    hal.buffer.assert<%x : !hal.buffer> message("input1") allocator(%a_allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %on_b = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.copy' on device_b (cuda) uses a buffer allocated by device_a (local), memory device_b cannot access
    hal.device.queue.copy<%b : !hal.device> affinity(%any) wait(%f0) signal(%f1) source(%x : !hal.buffer)[%c0] target(%on_b : !hal.buffer)[%c0] length(%c16) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair: cuda and local memories are incompatible
    // CHECK-NEXT: note: the buffer is an argument imported on device_a at {{.*}}buffers.mlir:[[# @LINE - 7]]:5 (its hal.buffer.assert names device_a's allocator)
    util.return
  }
}

// -----

// Accepted: two CUDA devices share memory (IREE handles them) even in a
// program that also has a CPU.
module {
  util.global private @host = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu0 = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu1 = #hal.device.target<"cuda", {ordinal = 1 : index}> : !hal.device
  // OUT-LABEL: util.func public @two_cuda_devices(
  util.func public @two_cuda_devices() {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %g0 = util.global.load immutable @gpu0 : !hal.device
    %g1 = util.global.load immutable @gpu1 : !hal.device
    %f0 = hal.fence.create device(%g0 : !hal.device) flags("None") : !hal.fence
    %x = hal.device.queue.alloca<%g0 : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%g1 : !hal.device) flags("None") : !hal.fence
    %y = hal.device.queue.alloca<%g1 : !hal.device> affinity(%any) wait(%none) signal(%f1) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f2 = hal.fence.create device(%g1 : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%g1 : !hal.device> affinity(%any) wait(%f1) signal(%f2) source(%x : !hal.buffer)[%c0] target(%y : !hal.buffer)[%c0] length(%c16) flags("None")
    util.return
  }
}

// -----

// Accepted: one staging function called in both directions. Each call is
// checked with its own devices: the owner's pinned memory is copied on the
// CPU's queue and the GPU's queue, each into a buffer of the destination.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func private @stage(%src: !hal.buffer, %from: !hal.device, %to: !hal.device) -> !hal.buffer_view {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
    %device_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|Mapping"> : i32
    %b = util.global.load immutable @device_b : !hal.device
    %owner = hal.device.allocator<%b : !hal.device> : !hal.allocator
    %pinned = hal.allocator.allocate<%owner : !hal.allocator> affinity(%any) type(%pinned_type) usage(%usage) : !hal.buffer{%c16}
    %f0 = hal.fence.create device(%from : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%from : !hal.device> affinity(%any) wait(%none) signal(%f0) source(%src : !hal.buffer)[%c0] target(%pinned : !hal.buffer)[%c0] length(%c16) flags("None")
    %dst_allocator = hal.device.allocator<%to : !hal.device> : !hal.allocator
    %dst = hal.allocator.allocate<%dst_allocator : !hal.allocator> affinity(%any) type(%device_type) usage(%usage) : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%to : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%to : !hal.device> affinity(%any) wait(%none) signal(%f1) source(%pinned : !hal.buffer)[%c0] target(%dst : !hal.buffer)[%c0] length(%c16) flags("None")
    %i8 = hal.element_type<i8> : i32
    %dense = hal.encoding_type<dense_row_major> : i32
    %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %c16] shape([%c16]) type(%i8) encoding(%dense) : !hal.buffer_view
    util.return %view : !hal.buffer_view
  }
  // OUT-LABEL: util.func public @round_trip(
  util.func public @round_trip(%arg: !hal.buffer_view) -> !hal.buffer_view {
    %c16 = arith.constant 16 : index
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %x = hal.buffer_view.buffer<%arg : !hal.buffer_view> : !hal.buffer
    %a_allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    hal.buffer.assert<%x : !hal.buffer> message("input0") allocator(%a_allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    %on_b = util.call @stage(%x, %a, %b) : (!hal.buffer, !hal.device, !hal.device) -> !hal.buffer_view
    %y = hal.buffer_view.buffer<%on_b : !hal.buffer_view> : !hal.buffer
    %back = util.call @stage(%y, %b, %a) : (!hal.buffer, !hal.device, !hal.device) -> !hal.buffer_view
    util.return %back : !hal.buffer_view
  }
}

// -----

// Rejected: the GPU's queue given a CPU buffer (CUDA_ERROR_INVALID_VALUE on
// the H200; undefined behaviour in release builds).
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @gpu_reads_cpu_buffer() {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %zero = arith.constant 0 : i32
    %none = util.null : !hal.fence
    %type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %on_a = hal.device.queue.alloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.fill' on device_b (cuda) uses a buffer allocated by device_a (local), memory device_b cannot access
    hal.device.queue.fill<%b : !hal.device> affinity(%any) wait(%none) signal(%f1) target(%on_a : !hal.buffer)[%c0] length(%c16) pattern(%zero : i32) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair: cuda and local memories are incompatible
    // CHECK-NEXT: note: the buffer is allocated at {{.*}}buffers.mlir:[[# @LINE - 5]]:13
    // CHECK-NOT: note:
    util.return
  }
}

// -----

// Rejected: the CPU's queue given GPU memory that is not host-visible.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @cpu_reads_gpu_memory() {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %b_allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    %on_b = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
    %f0 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %on_a = hal.device.queue.alloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.copy' on device_a (local) uses a device-local buffer allocated by device_b (cuda), memory device_a cannot access
    hal.device.queue.copy<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) source(%on_b : !hal.buffer)[%c0] target(%on_a : !hal.buffer)[%c0] length(%c16) flags("None")
    util.return
  }
}

// -----

// Rejected: an argument whose ABI places it on the CPU, used by the GPU.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @argument_on_wrong_device(%arg: !hal.buffer_view) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %x = hal.buffer_view.buffer<%arg : !hal.buffer_view> : !hal.buffer
    %a_allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    hal.buffer.assert<%x : !hal.buffer> message("input0") allocator(%a_allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %y = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %cmd = hal.command_buffer.create device(%b : !hal.device) mode("None") categories("Transfer|Dispatch") affinity(%any) bindings(%c2) : !hal.command_buffer
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.execute.indirect' on device_b (hip) uses a buffer allocated by device_a (local), memory device_b cannot access
    hal.device.queue.execute.indirect<%b : !hal.device> affinity(%any) wait(%f0) signal(%f1) commands(%cmd) bindings([(%x : !hal.buffer)[%c0, %c16], (%y : !hal.buffer)[%c0, %c16]]) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair: hip and local memories are incompatible
    // CHECK-NEXT: note: the buffer is an argument imported on device_a at {{.*}}buffers.mlir:[[# @LINE - 8]]:5 (its hal.buffer.assert names device_a's allocator)
    util.return
  }
}

// -----

// Rejected: a buffer kept in a global by an initializer on the CPU and used
// later by the GPU.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @cached : !hal.buffer
  util.initializer {
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %a_allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    %buffer = hal.allocator.allocate<%a_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
    util.global.store %buffer, @cached : !hal.buffer
    util.return
  }
  util.func public @global_buffer_on_gpu() {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %b = util.global.load immutable @device_b : !hal.device
    %cached = util.global.load @cached : !hal.buffer
    %zero = arith.constant 0 : i32
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.fill' on device_b (cuda) uses a buffer allocated by device_a (local)
    hal.device.queue.fill<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) target(%cached : !hal.buffer)[%c0] length(%c16) pattern(%zero : i32) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair
    // CHECK-NEXT: note: the buffer is allocated at {{.*}}buffers.mlir:[[# @LINE - 16]]:15
    util.return
  }
}

// -----

// A dealloca touches no memory: on another device's queue it is accepted for
// a buffer from an allocator (IREE emits such "origin" deallocas of
// constants), and rejected for queue-allocated (pooled) memory, which must go
// back to its own device.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @deallocas() {
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %b_allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    %allocated = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
    %f0 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.dealloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f0) buffer(%allocated : !hal.buffer) flags("None")
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %pooled = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f1) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %f2 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.dealloca' on device_a (local) uses a device-local buffer allocated by device_b (cuda)
    hal.device.queue.dealloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f2) buffer(%pooled : !hal.buffer) flags("None")
    util.return
  }
}

// -----

// Rejected: a buffer carried by a loop's block argument. The first trip uses
// the GPU's own buffer; later trips the CPU's.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @loop_carried(%n: index) {
    %zero = arith.constant 0 : i32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %first = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    cf.br ^loop(%c0, %first : index, !hal.buffer)
  ^loop(%i: index, %current: !hal.buffer):
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.fill' on device_b (cuda) uses a buffer allocated by device_a (local)
    hal.device.queue.fill<%b : !hal.device> affinity(%any) wait(%none) signal(%f1) target(%current : !hal.buffer)[%c0] length(%c16) pattern(%zero : i32) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair
    // CHECK-NEXT: note: the buffer is allocated at {{.*}}buffers.mlir:[[# @LINE + 3]]:13
    // CHECK-NOT: note:
    %f2 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %next = hal.device.queue.alloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f2) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %i1 = arith.addi %i, %c1 : index
    %more = arith.cmpi slt, %i1, %n : index
    cf.cond_br %more, ^loop(%i1, %next : index, !hal.buffer), ^done
  ^done:
    util.return
  }
}

// -----

// Rejected: the staging variant that took pinned memory from the
// destination's allocator. Copying GPU -> CPU, the GPU's queue writes the
// CPU's memory: it passed on two CPUs and failed on the GPU. Reported inside
// the staging function, for the call that goes from the GPU to the CPU.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func private @stage_into_destination(%view: !hal.buffer_view, %from: !hal.device, %to: !hal.device) -> !hal.buffer_view {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
    %usage = hal.buffer_usage<"Transfer|Mapping"> : i32
    %src = hal.buffer_view.buffer<%view : !hal.buffer_view> : !hal.buffer
    %dst_allocator = hal.device.allocator<%to : !hal.device> : !hal.allocator
    %staging = hal.allocator.allocate<%dst_allocator : !hal.allocator> affinity(%any) type(%pinned_type) usage(%usage) : !hal.buffer{%c16}
    %f0 = hal.fence.create device(%from : !hal.device) flags("None") : !hal.fence
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.copy' on device_b (cuda) uses a buffer allocated by device_a (local), memory device_b cannot access
    hal.device.queue.copy<%from : !hal.device> affinity(%any) wait(%none) signal(%f0) source(%src : !hal.buffer)[%c0] target(%staging : !hal.buffer)[%c0] length(%c16) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair
    // CHECK-NEXT: note: the buffer is allocated at {{.*}}buffers.mlir:[[# @LINE - 5]]:16
    // CHECK-NOT: note:
    %i8 = hal.element_type<i8> : i32
    %dense = hal.encoding_type<dense_row_major> : i32
    %out = hal.buffer_view.create buffer(%staging : !hal.buffer)[%c0, %c16] shape([%c16]) type(%i8) encoding(%dense) : !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
  util.func public @stage_both_ways(%arg: !hal.buffer_view) -> !hal.buffer_view {
    %c16 = arith.constant 16 : index
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %x = hal.buffer_view.buffer<%arg : !hal.buffer_view> : !hal.buffer
    %a_allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    hal.buffer.assert<%x : !hal.buffer> message("input0") allocator(%a_allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    %on_b = util.call @stage_into_destination(%arg, %a, %b) : (!hal.buffer_view, !hal.device, !hal.device) -> !hal.buffer_view
    %back = util.call @stage_into_destination(%on_b, %b, %a) : (!hal.buffer_view, !hal.device, !hal.device) -> !hal.buffer_view
    util.return %back : !hal.buffer_view
  }
}

// -----

// Rejected: origins followed through structured control flow (scf.if
// results, scf.for iteration arguments) where it is left at the HAL phase.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @structured(%cond: i1, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %a_allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    %b_allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    %on_b = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
    %either = scf.if %cond -> (!hal.buffer) {
      %on_a = hal.allocator.allocate<%a_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
      scf.yield %on_a : !hal.buffer
    } else {
      scf.yield %on_b : !hal.buffer
    }
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.device.queue.copy' on device_b (cuda) uses a buffer allocated by device_a (local)
    hal.device.queue.copy<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) source(%either : !hal.buffer)[%c0] target(%on_b : !hal.buffer)[%c0] length(%c16) flags("None")
    // CHECK-NEXT: note: device_b and device_a are a staged pair
    // CHECK-NEXT: note: the buffer is allocated at {{.*}}buffers.mlir:[[# @LINE - 9]]:15
    // CHECK-NEXT: note: 1 more violation(s):
    // CHECK-NEXT: note:   {{.*}}buffers.mlir:[[# @LINE + 3]]:7: 'hal.device.queue.copy' on device_b (cuda) uses a buffer allocated by device_a (local)
    %last = scf.for %i = %c0 to %n step %c1 iter_args(%current = %on_b) -> (!hal.buffer) {
      %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
      hal.device.queue.copy<%b : !hal.device> affinity(%any) wait(%none) signal(%f1) source(%current : !hal.buffer)[%c0] target(%on_b : !hal.buffer)[%c0] length(%c16) flags("None")
      %next = hal.allocator.allocate<%a_allocator : !hal.allocator> affinity(%any) type(%type) usage(%usage) : !hal.buffer{%c16}
      scf.yield %next : !hal.buffer
    }
    util.return
  }
}

// -----

// Rejected: a command buffer recorded for the GPU that copies from a CPU
// buffer.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @command_buffer_on_gpu() -> !hal.command_buffer {
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
    // CHECK: buffers.mlir:[[# @LINE + 1]]:5: error: 'hal.command_buffer.copy_buffer' in a command buffer on device_b (cuda) uses a buffer allocated by device_a (local)
    hal.command_buffer.copy_buffer<%cmd : !hal.command_buffer> source(%x : !hal.buffer)[%c0] target(%y : !hal.buffer)[%c0] length(%c16) flags("None")
    hal.command_buffer.finalize<%cmd : !hal.command_buffer>
    util.return %cmd : !hal.command_buffer
  }
}

// CHECK: rc=1
// OUT-NOT: @gpu_reads_cpu_buffer
// OUT-NOT: @other_argument_on_gpu
// OUT-NOT: @cpu_reads_gpu_memory
// OUT-NOT: @argument_on_wrong_device
// OUT-NOT: @global_buffer_on_gpu
// OUT-NOT: @loop_carried
// OUT-NOT: @stage_both_ways
// OUT-NOT: @structured
// OUT-NOT: @command_buffer_on_gpu
// OUT: rc=1
