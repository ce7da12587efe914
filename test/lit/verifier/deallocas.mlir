// Deallocations (rule pooled-dealloca): a queue deallocation touches no memory, so only
// queue-allocated buffers must belong to the queue's device; with
// flags(PreferOrigin) the runtime performs it on the device that allocated
// the buffer, whatever device the op names. IREE frees a loop-carried GPU
// buffer that way on the default (CPU) device; measured on the H200 it runs
// correctly (test/e2e/gpu_kit.py, loop_on_gpu and loop_on_gpu_stock_iree),
// so it is accepted. Without PreferOrigin it is rejected.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; true) | grep -c "error:" | FileCheck %s --check-prefix=COUNT
// COUNT: {{^1$}}
// CHECK: without_prefer_origin.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'hal.device.queue.dealloca' on device_a (local) uses a device-local buffer allocated by device_b (cuda), memory device_a cannot access
// CHECK: rc=1

// The shape IREE emits for a loop on device_b in a module whose default is
// device_a: the loop's block argument merges the first and later buffers.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @loop_on_gpu(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c48 = arith.constant 48 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %first = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c48}
    cf.br ^bb1(%c0, %first, %f0 : index, !hal.buffer, !hal.fence)
  ^bb1(%i: index, %buf: !hal.buffer, %ready: !hal.fence):
    %more = arith.cmpi slt, %i, %n : index
    cf.cond_br %more, ^bb3, ^bb2
  ^bb3:
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %next = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%ready) signal(%f1) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c48}
    %i1 = arith.addi %i, %c1 : index
    cf.br ^bb1(%i1, %next, %f1 : index, !hal.buffer, !hal.fence)
  ^bb2:
    %f2 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.dealloca<%a : !hal.device> affinity(%any) wait(%ready) signal(%f2) buffer(%buf : !hal.buffer) flags(PreferOrigin)
    util.return
  }
}

// -----

// A device deallocating its own buffer: unchanged.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @own_buffer() {
    %c48 = arith.constant 48 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %buf = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c48}
    %f1 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    hal.device.queue.dealloca<%b : !hal.device> affinity(%any) wait(%f0) signal(%f1) buffer(%buf : !hal.buffer) flags(PreferOrigin)
    util.return
  }
}

// -----

// Two local devices share memory: IREE's behaviour stands.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @local_pair() {
    %c48 = arith.constant 48 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %buf = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c48}
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.dealloca<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) buffer(%buf : !hal.buffer) flags(PreferOrigin)
    util.return
  }
}

// -----

// The same deallocation without PreferOrigin: the CPU's queue would return
// the GPU's pooled memory.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @without_prefer_origin() {
    %c48 = arith.constant 48 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %buf = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c48}
    %f1 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    hal.device.queue.dealloca<%a : !hal.device> affinity(%any) wait(%f0) signal(%f1) buffer(%buf : !hal.buffer) flags("None") loc("without_prefer_origin.mlir":3:5)
    util.return
  }
}
