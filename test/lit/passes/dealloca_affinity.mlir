// dealloca-affinity: a stream.resource.dealloca without an affinity, whose
// timepoint an op on another device than the default waits on, gets the
// affinity of the allocation its resource comes from, through a loop's
// block arguments. One nothing on another device waits on, one with an
// affinity, one whose resource comes from allocations on two devices, one
// of a function argument, and one whose allocation is on the module's
// default device (where IREE puts it anyway) stay as they are.
// RUN: mdc-opt %s --split-input-file --pass=dealloca-affinity | FileCheck %s

util.global private @device_a : !hal.device
util.global private @device_b : !hal.device
// CHECK-LABEL: util.func public @loop_carried(
// CHECK:       ^bb3:
// CHECK-NEXT:    stream.resource.dealloca origin on(#hal.device.affinity<@device_b>) await(%{{.+}}) => %{{.+}}
util.func public @loop_carried(%n: index) -> !stream.timepoint {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %r, %t = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) : !stream.resource<transient>{%c20} => !stream.timepoint
  cf.br ^bb1(%c0, %r, %t : index, !stream.resource<transient>, !stream.timepoint)
^bb1(%i: index, %res: !stream.resource<transient>, %tp: !stream.timepoint):
  %p = arith.cmpi slt, %i, %n : index
  cf.cond_br %p, ^bb2, ^bb3
^bb2:
  %r2, %t2 = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%tp) => !stream.resource<transient>{%c20} => !stream.timepoint
  %i2 = arith.addi %i, %c1 : index
  cf.br ^bb1(%i2, %r2, %t2 : index, !stream.resource<transient>, !stream.timepoint)
^bb3:
  %d = stream.resource.dealloca origin await(%tp) => %res : !stream.resource<transient>{%c20} => !stream.timepoint
  cf.br ^bb4(%d : !stream.timepoint)
^bb4(%after: !stream.timepoint):
  %r3, %t3 = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%after) => !stream.resource<transient>{%c20} => !stream.timepoint
  util.return %t3 : !stream.timepoint
}

// -----
util.global private @device_a : !hal.device
util.global private @device_b : !hal.device
// CHECK-LABEL: util.func public @awaited_by_nobody_else(
// CHECK:         stream.resource.dealloca origin await(
util.func public @awaited_by_nobody_else() -> !stream.timepoint {
  %c20 = arith.constant 20 : index
  %r, %t = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) : !stream.resource<transient>{%c20} => !stream.timepoint
  %d = stream.resource.dealloca origin await(%t) => %r : !stream.resource<transient>{%c20} => !stream.timepoint
  util.return %d : !stream.timepoint
}

// -----
util.global private @device_a : !hal.device
util.global private @device_b : !hal.device
// CHECK-LABEL: util.func public @two_origins(
// CHECK:         stream.resource.dealloca origin await(
// CHECK:         stream.resource.dealloca origin on(#hal.device.affinity<@device_a>) await(
// CHECK:         stream.resource.dealloca origin await(
util.func public @two_origins(%c: i1, %arg: !stream.resource<transient>) -> (!stream.timepoint, !stream.timepoint, !stream.timepoint) {
  %c20 = arith.constant 20 : index
  %ra, %ta = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_a>) : !stream.resource<transient>{%c20} => !stream.timepoint
  %rb, %tb = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) : !stream.resource<transient>{%c20} => !stream.timepoint
  cf.cond_br %c, ^bb1(%ra, %ta : !stream.resource<transient>, !stream.timepoint), ^bb1(%rb, %tb : !stream.resource<transient>, !stream.timepoint)
^bb1(%res: !stream.resource<transient>, %tp: !stream.timepoint):
  %d = stream.resource.dealloca origin await(%tp) => %res : !stream.resource<transient>{%c20} => !stream.timepoint
  %e = stream.resource.dealloca origin on(#hal.device.affinity<@device_a>) await(%d) => %ra : !stream.resource<transient>{%c20} => !stream.timepoint
  %f = stream.resource.dealloca origin await(%e) => %arg : !stream.resource<transient>{%c20} => !stream.timepoint
  %rw, %tw = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%f) => !stream.resource<transient>{%c20} => !stream.timepoint
  util.return %d, %e, %tw : !stream.timepoint, !stream.timepoint, !stream.timepoint
}

// -----
module attributes {stream.affinity.default = #hal.device.affinity<@device_b>} {
util.global private @device_b : !hal.device
// CHECK-LABEL: util.func public @on_the_default(
// CHECK:         stream.resource.dealloca origin await(
util.func public @on_the_default() -> !stream.timepoint {
  %c20 = arith.constant 20 : index
  %r, %t = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) : !stream.resource<transient>{%c20} => !stream.timepoint
  %d = stream.resource.dealloca origin await(%t) => %r : !stream.resource<transient>{%c20} => !stream.timepoint
  %r2, %t2 = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%d) => !stream.resource<transient>{%c20} => !stream.timepoint
  util.return %t2 : !stream.timepoint
}
}
