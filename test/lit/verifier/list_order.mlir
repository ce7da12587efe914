// Rule list-order: no list a call reads is filled after the call. mdc's staging
// hands the fences of a value's pieces to the helper that waits for them in
// a list; IREE's scheduling once moved the fill after that call (the
// constant of test/lit/regress/constant_to_staged_and_shared_device.mlir),
// so the wait was on nothing and the GPU read pinned memory before the CPU
// wrote it: wrong numbers, no error. Filled before the call, it is accepted.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; true) | grep -c "error:" | FileCheck %s --check-prefix=COUNT
// COUNT: {{^2$}}
// CHECK: list_order.mlir:30:5: error: 'util.list.set' fills a list that '@arrived' has already read
// CHECK-NEXT: note: the call is at {{.*}}list_order.mlir:28:5
// The call takes the list through a util.optimization_barrier (as mdc's
// staging hands it over): still the same list.
// CHECK: list_order.mlir:71:5: error: 'util.list.set' fills a list that '@arrived' has already read
// CHECK-NEXT: note: the call is at {{.*}}list_order.mlir:69:5
// CHECK: rc=1

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func private @arrived(%pieces: !util.list<?>) -> ()
  util.func private @piece() -> !hal.fence
  util.func public @filled_after_read() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %list = util.list.create %c1 : !util.list<?>
    util.list.resize %list, %c1 : !util.list<?>
    util.call @arrived(%list) : (!util.list<?>) -> ()
    %f = util.call @piece() : () -> !hal.fence
    util.list.set %list[%c0], %f : !hal.fence -> !util.list<?>
    util.return
  }
}

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func private @arrived(%pieces: !util.list<?>) -> ()
  util.func private @piece() -> !hal.fence
  util.func public @filled_before_read(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %list = util.list.create %n : !util.list<?>
    util.list.resize %list, %n : !util.list<?>
    scf.for %i = %c0 to %n step %c1 {
      %f = util.call @piece() : () -> !hal.fence
      util.list.set %list[%i], %f : !hal.fence -> !util.list<?>
    }
    util.call @arrived(%list) : (!util.list<?>) -> ()
    util.return
  }
}

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func private @arrived(%pieces: !util.list<?>) -> ()
  util.func private @piece() -> !hal.fence
  util.func public @filled_after_read_through_a_barrier() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %list = util.list.create %c1 : !util.list<?>
    util.list.resize %list, %c1 : !util.list<?>
    %kept = util.optimization_barrier %list : !util.list<?>
    util.call @arrived(%kept) : (!util.list<?>) -> ()
    %f = util.call @piece() : () -> !hal.fence
    util.list.set %list[%c0], %f : !hal.fence -> !util.list<?>
    util.return
  }
}
