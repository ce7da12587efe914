// memoized-selects-in-order: IREE's memoized device selections (an
// initializer storing the device a hal.allocator.select picks into
// @__allocator_select_device, @__allocator_select_device_0, ...) get their
// names and places in program order: the select first loaded earliest
// takes the first name and the first place, whatever order IREE's hash map
// gave them. Other ops stay where they are.
// RUN: mdc-opt %s --pass=memoized-selects-in-order --split-input-file | FileCheck %s

// The select loaded first (usage Transfer) was IREE's second: the two swap
// names and places; the function's loads name the same selects as before.
// CHECK-LABEL: module @swapped
// CHECK:       util.global private @dev_a : !hal.device
// CHECK-NEXT:  util.global private @dev_b : !hal.device
// CHECK-NEXT:  util.global private @__allocator_select_device : !hal.device
// CHECK-NEXT:  util.initializer {
// CHECK:         hal.buffer_usage<"TransferSource|TransferTarget|Transfer"> : i32
// CHECK:         util.global.store %{{.+}}, @__allocator_select_device : !hal.device
// CHECK:       util.global private @__allocator_select_device_0 : !hal.device
// CHECK-NEXT:  util.initializer {
// CHECK:         hal.buffer_usage<"TransferSource|TransferTarget|Transfer|SharingImmutable"> : i32
// CHECK:         util.global.store %{{.+}}, @__allocator_select_device_0 : !hal.device
// CHECK:       util.func public @f() -> (!hal.device, !hal.device) {
// CHECK-NEXT:    %[[T:.+]] = util.global.load immutable @__allocator_select_device : !hal.device
// CHECK-NEXT:    %[[S:.+]] = util.global.load immutable @__allocator_select_device_0 : !hal.device
// CHECK-NEXT:    util.return %[[T]], %[[S]]
module @swapped {
  util.global private @dev_a : !hal.device
  util.global private @dev_b : !hal.device
  util.global private @__allocator_select_device : !hal.device
  util.initializer {
    %c-1 = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|SharingImmutable"> : i32
    %a = util.global.load @dev_a : !hal.device
    %b = util.global.load @dev_b : !hal.device
    %d, %q = hal.allocator.select from([(%a, %c-1 : !hal.device, i64), (%b, %c-1 : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.global.store %d, @__allocator_select_device : !hal.device
    util.return
  }
  util.global private @__allocator_select_device_0 : !hal.device
  util.initializer {
    %c-1 = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer"> : i32
    %a = util.global.load @dev_a : !hal.device
    %b = util.global.load @dev_b : !hal.device
    %d, %q = hal.allocator.select from([(%a, %c-1 : !hal.device, i64), (%b, %c-1 : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.global.store %d, @__allocator_select_device_0 : !hal.device
    util.return
  }
  util.func public @f() -> (!hal.device, !hal.device) {
    %transfer = util.global.load immutable @__allocator_select_device_0 : !hal.device
    %shared = util.global.load immutable @__allocator_select_device : !hal.device
    util.return %transfer, %shared : !hal.device, !hal.device
  }
}

// -----

// With the queue-affinity globals too (IREE's counter is shared by both
// kinds: the second select's are _0 and _1), each kind is renamed.
// CHECK-LABEL: module @with_affinities
// CHECK:       util.global private @__allocator_select_device : !hal.device
// CHECK-NEXT:  util.global private @__allocator_select_affinity : i64
// CHECK-NEXT:  util.initializer {
// CHECK:         hal.buffer_usage<"TransferSource|TransferTarget|Transfer"> : i32
// CHECK:         util.global.store %{{.+}}, @__allocator_select_device : !hal.device
// CHECK-NEXT:    util.global.store %{{.+}}, @__allocator_select_affinity : i64
// CHECK:       util.global private @__allocator_select_device_0 : !hal.device
// CHECK-NEXT:  util.global private @__allocator_select_affinity_1 : i64
// CHECK-NEXT:  util.initializer {
// CHECK:         hal.buffer_usage<"TransferSource|TransferTarget|Transfer|SharingImmutable"> : i32
// CHECK:       util.func public @f() -> (!hal.device, i64) {
// CHECK-NEXT:    util.global.load immutable @__allocator_select_device : !hal.device
// CHECK-NEXT:    util.global.load immutable @__allocator_select_affinity : i64
module @with_affinities {
  util.global private @dev_a : !hal.device
  util.global private @dev_b : !hal.device
  util.global private @__allocator_select_device : !hal.device
  util.global private @__allocator_select_affinity : i64
  util.initializer {
    %c-1 = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|SharingImmutable"> : i32
    %a = util.global.load @dev_a : !hal.device
    %b = util.global.load @dev_b : !hal.device
    %d, %q = hal.allocator.select from([(%a, %c-1 : !hal.device, i64), (%b, %c-1 : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.global.store %d, @__allocator_select_device : !hal.device
    util.global.store %q, @__allocator_select_affinity : i64
    util.return
  }
  util.global private @__allocator_select_device_0 : !hal.device
  util.global private @__allocator_select_affinity_1 : i64
  util.initializer {
    %c-1 = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer"> : i32
    %a = util.global.load @dev_a : !hal.device
    %b = util.global.load @dev_b : !hal.device
    %d, %q = hal.allocator.select from([(%a, %c-1 : !hal.device, i64), (%b, %c-1 : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.global.store %d, @__allocator_select_device_0 : !hal.device
    util.global.store %q, @__allocator_select_affinity_1 : i64
    util.return
  }
  util.func public @f() -> (!hal.device, i64) {
    %device = util.global.load immutable @__allocator_select_device_0 : !hal.device
    %affinity = util.global.load immutable @__allocator_select_affinity_1 : i64
    util.return %device, %affinity : !hal.device, i64
  }
}

// -----

// Negative: selects already in program order are left as they are.
// CHECK-LABEL: module @in_order
// CHECK:       util.global private @__allocator_select_device : !hal.device
// CHECK-NEXT:  util.initializer {
// CHECK:         hal.buffer_usage<"TransferSource|TransferTarget|Transfer"> : i32
// CHECK:       util.global private @__allocator_select_device_0 : !hal.device
// CHECK-NEXT:  util.initializer {
// CHECK:         hal.buffer_usage<"TransferSource|TransferTarget|Transfer|SharingImmutable"> : i32
// CHECK:       util.func public @f()
// CHECK-NEXT:    util.global.load immutable @__allocator_select_device : !hal.device
// CHECK-NEXT:    util.global.load immutable @__allocator_select_device_0 : !hal.device
module @in_order {
  util.global private @dev_a : !hal.device
  util.global private @dev_b : !hal.device
  util.global private @__allocator_select_device : !hal.device
  util.initializer {
    %c-1 = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer"> : i32
    %a = util.global.load @dev_a : !hal.device
    %b = util.global.load @dev_b : !hal.device
    %d, %q = hal.allocator.select from([(%a, %c-1 : !hal.device, i64), (%b, %c-1 : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.global.store %d, @__allocator_select_device : !hal.device
    util.return
  }
  util.global private @__allocator_select_device_0 : !hal.device
  util.initializer {
    %c-1 = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|SharingImmutable"> : i32
    %a = util.global.load @dev_a : !hal.device
    %b = util.global.load @dev_b : !hal.device
    %d, %q = hal.allocator.select from([(%a, %c-1 : !hal.device, i64), (%b, %c-1 : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.global.store %d, @__allocator_select_device_0 : !hal.device
    util.return
  }
  util.func public @f() -> (!hal.device, !hal.device) {
    %transfer = util.global.load immutable @__allocator_select_device : !hal.device
    %shared = util.global.load immutable @__allocator_select_device_0 : !hal.device
    util.return %transfer, %shared : !hal.device, !hal.device
  }
}
