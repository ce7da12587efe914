// Rule result-memory: every result of a public function that its declaration (the
// iree.abi.declaration IREE keeps) puts on a device is memory that device
// can use: the caller reads it as that device's. An argument returned as it
// is stays in the memory of the device it is declared on. IREE's ABI folds
// an import on device_b exported on device_a to the argument itself, and
// before mdc's returned-argument-moves pass the caller of such a function
// got device_b's buffer back as device_a's result.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; echo "rc=$?") | FileCheck %s --check-prefix=OUT
// Two CPUs share memory, unless --link stages them:
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file --link=a:b=staged 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=STAGED
//
// What stock IREE makes of the stream IR of such a function when nothing
// stages the crossing (an import on device_b, cuda, whose resource is
// exported on device_a, local): IREE drops device_a's global, as nothing runs
// there, and --device says what device_a is.
// RUN: iree-compile %S/Inputs/argument_exported_elsewhere.mlir --compile-from=flow --compile-to=hal -o %t.hal.mlir
// RUN: (mdc-opt %t.hal.mlir --pass=device-isolation-verifier --device=a=local[0] 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=IREE
// IREE: error: result 0 of @passthrough, declared on device_a (local), is a buffer allocated by device_b (cuda): memory device_a cannot access
// IREE-NEXT: note: device_a and device_b are a staged pair: local and cuda memories are incompatible
// IREE-NEXT: note: the buffer is an argument imported on device_b at
// IREE: rc=1
// Without it nothing is known of device_a's memory, and nothing is an error.
// RUN: (mdc-opt %t.hal.mlir --pass=device-isolation-verifier 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN-NOT: error
// UNKNOWN: rc=0

// Rejected: the argument itself returned, as IREE's ABI folds it.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @folded(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @folded(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"}} {
    // CHECK: results.mlir:[[# @LINE + 1]]:5: error: result 0 of @folded, declared on device_a (local), is argument 0, declared on device_b (cuda), returned as it is: memory device_a cannot access
    util.return %arg0 : !hal.buffer_view
    // CHECK-NEXT: note: device_a and device_b are a staged pair: local and cuda memories are incompatible
    // CHECK-NEXT: note: nothing moves it: the caller gets its own buffer back as device_a's result (IREE folds an import exported on another device)
    // CHECK-NOT: note:
  }
}

// -----

// Rejected: the other way, a CPU's argument returned as the GPU's result.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @folded_to_b(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> (!hal.buffer_view, !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @folded_to_b(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %input1: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, %output1: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})"}} {
    // CHECK: results.mlir:[[# @LINE + 1]]:5: error: result 0 of @folded_to_b, declared on device_b (cuda), is argument 0, declared on device_a (local), returned as it is: memory device_b cannot access
    util.return %arg0, %arg1 : !hal.buffer_view, !hal.buffer_view
    // CHECK-NOT: error: result 1
  }
}

// -----

// Rejected: an argument imported on the GPU (its hal.buffer.assert names the
// GPU's allocator) and exported on the CPU, with nothing in between.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @exported_elsewhere(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @exported_elsewhere(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"}} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %element_type_f32 = hal.element_type<f32> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    %b = util.global.load immutable @device_b : !hal.device
    %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
    %allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    hal.buffer.assert<%buffer : !hal.buffer> message("tensor") allocator(%allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    %view = hal.buffer_view.create buffer(%buffer : !hal.buffer)[%c0, %c16] shape([%c4]) type(%element_type_f32) encoding(%dense_row_major) : !hal.buffer_view
    // CHECK: results.mlir:[[# @LINE + 1]]:5: error: result 0 of @exported_elsewhere, declared on device_a (local), is a buffer allocated by device_b (cuda): memory device_a cannot access
    util.return %view : !hal.buffer_view
    // CHECK-NEXT: note: device_a and device_b are a staged pair: local and cuda memories are incompatible
    // CHECK-NEXT: note: the buffer is an argument imported on device_b at {{.*}}results.mlir:[[# @LINE - 5]]:5
  }
}

// -----

// Rejected: device-local GPU memory returned as the CPU's result.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @allocated_elsewhere() -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @allocated_elsewhere() -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"}} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %element_type_f32 = hal.element_type<f32> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %b = util.global.load immutable @device_b : !hal.device
    %f0 = hal.fence.create device(%b : !hal.device) flags("None") : !hal.fence
    %on_b = hal.device.queue.alloca<%b : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %view = hal.buffer_view.create buffer(%on_b : !hal.buffer)[%c0, %c16] shape([%c4]) type(%element_type_f32) encoding(%dense_row_major) : !hal.buffer_view
    // CHECK: results.mlir:[[# @LINE + 1]]:5: error: result 0 of @allocated_elsewhere, declared on device_a (local), is a buffer allocated by device_b (hip): memory device_a cannot access
    util.return %view : !hal.buffer_view
    // CHECK-NEXT: note: device_a and device_b are a staged pair
    // CHECK-NEXT: note: the buffer is allocated at {{.*}}results.mlir:[[# @LINE - 5]]:13
  }
}

// -----

// Accepted: an argument returned on its own device; a result declared on no
// device; a CPU result in the GPU's pinned (host-visible) memory, as mdc's
// small crossings leave it; a CPU result in the CPU's own memory.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // OUT-LABEL: util.func public @accepted(
  util.func public @accepted(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> (!hal.buffer_view, !hal.buffer_view, !hal.buffer_view, !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @accepted(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, %input1: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, %output1: tensor<4xf32>, %output2: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %output3: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"}} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %element_type_f32 = hal.element_type<f32> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    %device_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %b_allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    %pinned = hal.allocator.allocate<%b_allocator : !hal.allocator> affinity(%any) type(%pinned_type) usage(%usage) : !hal.buffer{%c16}
    %in_pinned = hal.buffer_view.create buffer(%pinned : !hal.buffer)[%c0, %c16] shape([%c4]) type(%element_type_f32) encoding(%dense_row_major) : !hal.buffer_view
    %f0 = hal.fence.create device(%a : !hal.device) flags("None") : !hal.fence
    %on_a = hal.device.queue.alloca<%a : !hal.device> affinity(%any) wait(%none) signal(%f0) pool(%pool) type(%device_type) usage(%usage) flags("None") : !hal.buffer{%c16}
    %own = hal.buffer_view.create buffer(%on_a : !hal.buffer)[%c0, %c16] shape([%c4]) type(%element_type_f32) encoding(%dense_row_major) : !hal.buffer_view
    util.return %arg0, %arg1, %in_pinned, %own : !hal.buffer_view, !hal.buffer_view, !hal.buffer_view, !hal.buffer_view
  }
}

// -----

// Two CPUs: accepted, as they share memory; rejected when --link stages them.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  // OUT-LABEL: util.func public @two_cpus(
  util.func public @two_cpus(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @two_cpus(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"}} {
    // STAGED: results.mlir:[[# @LINE + 1]]:5: error: result 0 of @two_cpus, declared on device_a (local), is argument 0, declared on device_b (local), returned as it is: memory device_a cannot access
    util.return %arg0 : !hal.buffer_view
    // STAGED-NEXT: note: device_a and device_b are a staged pair: forced by --link (owner device_b)
  }
}

// CHECK-NOT: error: {{.*}}@two_cpus
// CHECK: rc=1
// OUT: rc=1
// STAGED: rc=1
