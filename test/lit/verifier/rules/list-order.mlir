// Rule list-order: IREE's scheduling can move the fill of a list of fences
// after the call that waits on it, and the GPU then reads pinned memory
// before the CPU has written it.
// Refused: the list is filled after the call that reads it. Accepted: the
// same fill before the call.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @filled_after_read
// OUT: @filled_before_read
// OUT-NOT: @filled_after_read

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
    // CHECK: list-order.mlir:[[# @LINE + 1]]:5: error: 'util.list.set' fills a list that '@arrived' has already read
    util.list.set %list[%c0], %f : !hal.fence -> !util.list<?>
    // CHECK-NEXT: note: the call is at {{.*}}list-order.mlir:[[# @LINE - 4]]:5
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
  util.func private @arrived(%pieces: !util.list<?>) -> ()
  util.func private @piece() -> !hal.fence
  util.func public @filled_before_read() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %list = util.list.create %c1 : !util.list<?>
    util.list.resize %list, %c1 : !util.list<?>
    %f = util.call @piece() : () -> !hal.fence
    util.list.set %list[%c0], %f : !hal.fence -> !util.list<?>
    util.call @arrived(%list) : (!util.list<?>) -> ()
    util.return
  }
}
