// returned-argument-moves, on the program as written (before IREE): an
// argument returned, as it is or reshaped, as a result declared on a device
// it must be staged to is moved there by a flow.tensor.transfer right
// before the return (IREE's ABI would fold the crossing away). Nothing else
// changes: results on the argument's own device, pairs that share memory,
// results declared on no device, computed results.
// RUN: mdc-opt %s --pass=returned-argument-moves --split-input-file --device=a=local[0] --device=b=cuda[0] | FileCheck %s
// Two CPUs share memory: nothing moves, unless --link stages them.
// RUN: mdc-opt %s --pass=returned-argument-moves --split-input-file --device=a=local[0] --device=b=local[1] | FileCheck %s --check-prefix=SHARED
// RUN: mdc-opt %s --pass=returned-argument-moves --split-input-file --device=a=local[0] --device=b=local[1] --link=a:b=staged | FileCheck %s
// SHARED-NOT: flow.tensor.transfer

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

// Left alone: a result on the argument's own device, a result declared on
// no device, a computed result; of several results only the crossing moves.
// CHECK-LABEL: func.func public @only_the_crossing(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[Y:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: %[[M:.+]] = flow.tensor.transfer %[[X]] : tensor<4xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: return %[[X]], %[[M]], %[[Y]], %[[S]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NOT: flow.tensor.transfer
func.func public @only_the_crossing(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
                                    %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32>,
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %s = arith.addf %x, %y : tensor<4xf32>
  return %x, %x, %y, %s : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Through a call of a function that returns its argument (IREE inlines it,
// and the crossing folds away as above): the call's result moves. A
// recursive one is followed no further than itself.
// CHECK-LABEL: func.func public @through_a_call(
// CHECK-NEXT: %[[R:.+]] = call @identity(
// CHECK-NEXT: %[[S:.+]] = call @forever(
// CHECK-NEXT: %[[M:.+]] = flow.tensor.transfer %[[R]] : tensor<8xf32> to #hal.device.promise<@device_a>
// CHECK-NEXT: return %[[M]], %[[S]] :
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
