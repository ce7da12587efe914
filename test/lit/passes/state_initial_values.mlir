// state-initial-values, on the program as IREE's input phase leaves it:
// mutable globals of one type and one initial value (stock IREE 3.13 gives
// them one buffer: test/lit/regress/iree_mutable_globals_share_initial_value.test)
// each lose the value to an initializer right after them that fills the
// global from a constant behind an optimization barrier (a value that is
// no fill's: inserted over a fill at a barrier's offset 0). Immutable
// globals, a mutable global whose (type, value) no other shares, and
// globals of no value are left as they are.
// RUN: mdc-opt %s --pass=state-initial-values --split-input-file | FileCheck %s
// The modules with no such pair come out as they go in.
// RUN: mdc-opt %S/Inputs/state_initial_values_untouched.mlir --split-input-file -o %t.before.mlir
// RUN: mdc-opt %S/Inputs/state_initial_values_untouched.mlir --pass=state-initial-values --split-input-file -o %t.after.mlir
// RUN: diff %t.before.mlir %t.after.mlir

// Two zeroed caches: each filled with a zero of its own. The immutable
// global of the same value and the cache of another value stay.
// CHECK-LABEL: module {
// CHECK-NEXT: util.global private mutable @k0 : tensor<2x4xf32>
// CHECK-NEXT: util.initializer {
// CHECK-NEXT:   %[[C:.+]] = arith.constant 0 : i32
// CHECK-NEXT:   %[[B:.+]] = util.optimization_barrier %[[C]] : i32
// CHECK-NEXT:   %[[F:.+]] = arith.bitcast %[[B]] : i32 to f32
// CHECK-NEXT:   %[[E:.+]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:   %[[FILL:.+]] = linalg.fill ins(%[[F]] : f32) outs(%[[E]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   util.global.store %[[FILL]], @k0 : tensor<2x4xf32>
// CHECK-NEXT:   util.return
// CHECK-NEXT: }
// CHECK-NEXT: util.global private @zeros = dense<0.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT: util.global private mutable @k1 : tensor<2x4xf32>
// CHECK-NEXT: util.initializer {
// CHECK:        util.global.store %{{.+}}, @k1 : tensor<2x4xf32>
// CHECK:      util.global private mutable @other = dense<1.000000e+00> : tensor<2x4xf32>
// CHECK-NOT:  util.initializer
// CHECK:      util.func public @step
module {
  util.global private mutable @k0 = dense<0.0> : tensor<2x4xf32>
  util.global private @zeros = dense<0.0> : tensor<2x4xf32>
  util.global private mutable @k1 = dense<0.0> : tensor<2x4xf32>
  util.global private mutable @other = dense<1.0> : tensor<2x4xf32>
  util.func public @step(%x: tensor<1x4xf32>, %p: index) {
    %k0 = util.global.load @k0 : tensor<2x4xf32>
    %n0 = tensor.insert_slice %x into %k0[%p, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<2x4xf32>
    util.global.store %n0, @k0 : tensor<2x4xf32>
    %k1 = util.global.load @k1 : tensor<2x4xf32>
    %n1 = tensor.insert_slice %x into %k1[%p, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<2x4xf32>
    util.global.store %n1, @k1 : tensor<2x4xf32>
    util.return
  }
}

// -----

// -0.0 keeps its sign: the fill's element is made from its bits (IREE's VM
// makes the float constant -0.0 the constant +0.0). An i8 splat is made
// as an i32 truncated. A cache placed on a device (as --place writes it)
// is filled there: the initializer takes its affinity.
// CHECK-LABEL: module {
// CHECK-NEXT: util.global private mutable @n0 {stream.affinity = #hal.device.promise<@b>} : tensor<4xf32>
// CHECK-NEXT: util.initializer attributes {stream.affinity = #hal.device.promise<@b>} {
// CHECK-NEXT:   arith.constant -2147483648 : i32
// CHECK:        util.global private mutable @n1 {stream.affinity = #hal.device.promise<@b>} : tensor<4xf32>
// CHECK:        util.global private mutable @i0 : tensor<4xi8>
// CHECK-NEXT: util.initializer {
// CHECK-NEXT:   %[[C:.+]] = arith.constant -3 : i32
// CHECK-NEXT:   %[[B:.+]] = util.optimization_barrier %[[C]] : i32
// CHECK-NEXT:   %[[T:.+]] = arith.trunci %[[B]] : i32 to i8
// CHECK-NEXT:   %[[E:.+]] = tensor.empty() : tensor<4xi8>
// CHECK-NEXT:   linalg.fill ins(%[[T]] : i8)
// CHECK:      util.global private mutable @i1 : tensor<4xi8>
module {
  util.global private mutable @n0 {stream.affinity = #hal.device.promise<@b>} = dense<-0.0> : tensor<4xf32>
  util.global private mutable @n1 {stream.affinity = #hal.device.promise<@b>} = dense<-0.0> : tensor<4xf32>
  util.global private mutable @i0 = dense<-3> : tensor<4xi8>
  util.global private mutable @i1 = dense<-3> : tensor<4xi8>
}

// -----

// A value that is not a splat is inserted over a fill of zero, at an
// offset IREE cannot fold (an insert of the whole tensor at a static 0
// folds to the value itself, which CSE would merge again).
// CHECK-LABEL: module {
// CHECK-NEXT: util.global private mutable @d0 : tensor<2x2xf32>
// CHECK-NEXT: util.initializer {
// CHECK:        %[[FILL:.+]] = linalg.fill
// CHECK-NEXT:   %[[V:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:   %[[Z:.+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[O:.+]] = util.optimization_barrier %[[Z]] : index
// CHECK-NEXT:   %[[U:.+]] = tensor.insert_slice %[[V]] into %[[FILL]][%[[O]], 0] [2, 2] [1, 1]
// CHECK-NEXT:   util.global.store %[[U]], @d0 : tensor<2x2xf32>
// CHECK:      util.global private mutable @d1 : tensor<2x2xf32>
// CHECK-NEXT: util.initializer {
module {
  util.global private mutable @d0 = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  util.global private mutable @d1 = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
}
