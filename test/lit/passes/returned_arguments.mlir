// returned-argument-moves, on the program as written (before IREE): a
// result made of arguments on one device, returned as a result declared on
// a device it must be staged to (an argument as it is, reshaped, computed
// on), is moved there by a flow.tensor.transfer right before the return:
// IREE folds what it can on the way, and a fold to the argument itself took
// the crossing with it. Nothing else changes: results on the arguments' own
// device, pairs that share memory, results declared on no device, values
// of several devices' data, of explicit moves, of globals.
// RUN: mdc-opt %s --pass=returned-argument-moves --split-input-file --device=a=local[0] --device=b=cuda[0] | FileCheck %s
// Two CPUs share memory: nothing changes, unless --link stages them.
// RUN: mdc-opt %s --split-input-file -o %t.unchanged.mlir
// RUN: mdc-opt %s --pass=returned-argument-moves --split-input-file --device=a=local[0] --device=b=local[1] -o %t.shared.mlir
// RUN: diff %t.unchanged.mlir %t.shared.mlir
// RUN: mdc-opt %s --pass=returned-argument-moves --split-input-file --device=a=local[0] --device=b=local[1] --link=a:b=staged | FileCheck %s

// CHECK-LABEL: func.func public @returned_as_it_is(
// CHECK-SAME: %[[X:.+]]: tensor<4xf32>
// CHECK-NEXT: %[[M:.+]] = flow.tensor.transfer %[[X]] : tensor<4xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: return %[[M]] : tensor<4xf32>
func.func public @returned_as_it_is(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  return %x : tensor<4xf32>
}

// -----

// The other way, and through a reshape: the reshaped value moves.
// CHECK-LABEL: func.func public @collapsed(
// CHECK-NEXT: %[[C:.+]] = tensor.collapse_shape
// CHECK-NEXT: %[[M:.+]] = flow.tensor.transfer %[[C]] : tensor<8xf32> to #hal.device.promise<@device_b>
// CHECK-NEXT: return %[[M]] : tensor<8xf32>
func.func public @collapsed(%x: tensor<2x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %c : tensor<8xf32>
}

// -----

// A reshape there and back (IREE folds it to the argument itself), with a
// dynamic dimension: the move names it.
// CHECK-LABEL: func.func public @there_and_back(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x4xf32>
// CHECK:      %[[E:.+]] = tensor.expand_shape %[[C:[^ ]+]]
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[D:.+]] = tensor.dim %[[E]], %[[ZERO]] : tensor<?x4xf32>
// CHECK-NEXT: %[[M:.+]] = flow.tensor.transfer %[[E]] : tensor<?x4xf32>{%[[D]]} to #hal.device.promise<@device_a>
// CHECK-NEXT: return %[[M]] : tensor<?x4xf32>
func.func public @there_and_back(%x: tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x4xf32>
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  %e = tensor.expand_shape %c [[0, 1]] output_shape [%d, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}

// -----

// An argument declared on no device is on the default one (device_a, the
// first --device), where the caller gives it: returned on device_b, it moves.
// CHECK-LABEL: func.func public @default_device(
// CHECK-SAME: %[[X:.+]]: tensor<4xf32>
// CHECK-NEXT: %[[M:.+]] = flow.tensor.transfer %[[X]] : tensor<4xf32> to #hal.device.promise<@device_b>
// CHECK-NEXT: return %[[M]] : tensor<4xf32>
func.func public @default_device(%x: tensor<4xf32>) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  return %x : tensor<4xf32>
}

// -----

// Of several results only the crossings move: not a result on the
// arguments' own device, nor one declared on no device. A value computed
// from device_b's arguments alone (%s) moves too: IREE computes it there
// and would move it anyway; a value of both devices' data (%t) is left to
// IREE.
// CHECK-LABEL: func.func public @only_the_crossings(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[Y:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[Z:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: %[[T:.+]] = arith.addf %[[S]], %[[Z]]
// CHECK-NEXT: %[[MX:.+]] = flow.tensor.transfer %[[X]] : tensor<4xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: %[[MS:.+]] = flow.tensor.transfer %[[S]] : tensor<4xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: return %[[X]], %[[MX]], %[[Y]], %[[MS]], %[[T]] :
// CHECK-NOT: flow.tensor.transfer
func.func public @only_the_crossings(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
                                     %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
                                     %z: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32>,
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %s = arith.addf %x, %y : tensor<4xf32>
  %t = arith.addf %s, %z : tensor<4xf32>
  return %x, %x, %y, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Two transposes that cancel out (IREE folds them to the argument: random
// programs, seed 796118410 index 2), and a loop over an argument: the data
// is device_b's, and it moves.
// CHECK-LABEL: func.func public @folded_by_iree(
// CHECK: linalg.transpose
// CHECK: %[[T:.+]] = linalg.transpose
// CHECK: %[[L:.+]] = scf.for
// CHECK: %[[MT:.+]] = flow.tensor.transfer %[[T]] : tensor<2x3xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: %[[ML:.+]] = flow.tensor.transfer %[[L]] : tensor<2x3xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: return %[[MT]], %[[ML]] :
func.func public @folded_by_iree(%x: tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %e0 = tensor.empty() : tensor<3x2xf32>
  %t0 = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e0 : tensor<3x2xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<2x3xf32>
  %t1 = linalg.transpose ins(%t0 : tensor<3x2xf32>) outs(%e1 : tensor<2x3xf32>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %x) -> (tensor<2x3xf32>) {
    scf.yield %acc : tensor<2x3xf32>
  }
  return %t1, %l : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Left to IREE: a value the program moves itself, and one of a global.
// CHECK-LABEL: func.func public @moved_or_global(
// CHECK-NEXT: flow.tensor.transfer %{{.+}} to #hal.device.promise<@device_b>
// CHECK-NEXT: util.global.load
// CHECK-NEXT: return
util.global private @table = dense<1.0> : tensor<4xf32>
func.func public @moved_or_global(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %m = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %g = util.global.load @table : tensor<4xf32>
  return %m, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Through calls: a function that returns its argument (IREE inlines it,
// and the crossing folds away as above), and a recursive one (its results
// are its arguments' data; the search ends at itself): the calls' results
// move.
// CHECK-LABEL: func.func public @through_a_call(
// CHECK-NEXT: %[[R:.+]] = call @identity(
// CHECK-NEXT: %[[S:.+]] = call @forever(
// CHECK-NEXT: %[[MR:.+]] = flow.tensor.transfer %[[R]] : tensor<8xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: %[[MS:.+]] = flow.tensor.transfer %[[S]] : tensor<4xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: return %[[MR]], %[[MS]] :
func.func private @identity(%x: tensor<2x4xf32>) -> tensor<8xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %c : tensor<8xf32>
}
func.func private @forever(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @forever(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func public @through_a_call(%x: tensor<2x4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
                                 %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %r = call @identity(%x) : (tensor<2x4xf32>) -> tensor<8xf32>
  %s = call @forever(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %r, %s : tensor<8xf32>, tensor<4xf32>
}

// -----

// A private function is no ABI: left alone.
// CHECK-LABEL: func.func private @not_public(
// CHECK-NEXT: return
func.func private @not_public(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  return %x : tensor<4xf32>
}
