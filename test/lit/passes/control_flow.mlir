// Crossings inside structured control flow and initializers are staged in
// place: the export, the staging call and the import stay in the region of
// the transfer (or of the consumer), before its terminator.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s
// A second run finds nothing left to stage: the same checks hold.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion,transfer-insertion --split-input-file | FileCheck %s

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // A round trip in every iteration of an scf.for.
  util.func public @transfers_in_for(%v: f32, %n: index) -> !stream.resource<*> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!stream.resource<*>) {
      %on_b = stream.async.transfer %acc : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
      %c = stream.async.clone on(#hal.device.affinity<@device_b>) %on_b : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      %back = stream.async.transfer %c : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
      scf.yield %back : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
  // No transfer: the loop-carried value lives where its initial value does
  // (device_a) and is read on device_b inside the loop.
  util.func public @iter_arg_read_on_b(%v: f32, %n: index) -> !stream.resource<*> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!stream.resource<*>) {
      %c = stream.async.clone on(#hal.device.affinity<@device_b>) %acc : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      %back = stream.async.transfer %c : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
      scf.yield %back : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @transfers_in_for(
// CHECK:      %[[INIT:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NOT:  __mdc_stage
// CHECK:      scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (!stream.resource<*>) {
// CHECK-NEXT: %[[E1:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[ACC]]
// CHECK-NEXT: %[[RES_V1:[^ ,]+]], %[[TP_V1:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E1]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V1:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V1]] => (!hal.fence)
// CHECK-NEXT: %[[V1:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V1]] : tensor<?xi8>
// CHECK-DAG:  %[[A1:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B1:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O1:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S1:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V1]], %[[READY_V1]], %[[A1]], %[[B1]], %[[O1]])
// CHECK:      %[[I1:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S1]]
// CHECK-NEXT: %[[ON_B:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I1]]
// CHECK-NEXT: %[[C:.+]] = stream.async.clone on(#hal.device.affinity<@device_b>) %[[ON_B]]
// CHECK-NEXT: %[[E2:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[C]]
// CHECK-NEXT: %[[RES_V2:[^ ,]+]], %[[TP_V2:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E2]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V2:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V2]] => (!hal.fence)
// CHECK-NEXT: %[[V2:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V2]] : tensor<?xi8>
// CHECK-DAG:  %[[B2:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[A2:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[O2:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S2:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V2]], %[[READY_V2]], %[[B2]], %[[A2]], %[[O2]])
// CHECK:      %[[I2:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S2]]
// A value yielded to a loop's region arguments is a fresh copy, not a cast
// of the import (IREE cannot give one region argument two lifetimes).
// CHECK-NEXT: %[[BACK:.+]] = stream.async.clone on(#hal.device.affinity<@device_a>) %[[I2]]
// CHECK-NEXT: scf.yield %[[BACK]] : !stream.resource<*>
// CHECK-NEXT: }
// CHECK-NOT:  stream.async.transfer
// CHECK:      util.return
// CHECK-LABEL: util.func public @iter_arg_read_on_b(
// CHECK:      scf.for %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (!stream.resource<*>) {
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[ACC]]
// CHECK-NEXT: %[[E1:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[ACC]]
// CHECK-NEXT: %[[RES_V1:[^ ,]+]], %[[TP_V1:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E1]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V1:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V1]] => (!hal.fence)
// CHECK-NEXT: %[[V1:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V1]] : tensor<?xi8>
// CHECK-DAG:  %[[A1:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B1:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O1:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S1:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V1]], %[[READY_V1]], %[[A1]], %[[B1]], %[[O1]])
// CHECK:      %[[I1:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S1]]
// CHECK-NEXT: %[[ON_B:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I1]]
// CHECK-NEXT: stream.async.clone on(#hal.device.affinity<@device_b>) %[[ON_B]]
// CHECK:      util.call @__mdc_stage_gpu_to_local_via_device_b(
// CHECK:      scf.yield
// CHECK-NOT:  util.call @__mdc_stage

// -----

// The loop carries its value on device_a (where it entered); the body moves
// it to device_b and yields the device_b value with no transfer back. The
// back edge is a crossing: staged to device_a before the scf.yield.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @yield_from_other_device(%v: f32, %n: index) -> !stream.resource<*> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!stream.resource<*>) {
      %on_b = stream.async.transfer %acc : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
      %c = stream.async.clone on(#hal.device.affinity<@device_b>) %on_b : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @yield_from_other_device(
// CHECK:      scf.for %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (!stream.resource<*>) {
// CHECK:      util.call @__mdc_stage_local_to_gpu_via_device_b(
// CHECK:      %[[C:.+]] = stream.async.clone on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[C]]
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[C]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V]], %[[READY_V]], %[[B]], %[[A]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]]
// CHECK-NEXT: %[[BACK:.+]] = stream.async.clone on(#hal.device.affinity<@device_a>) %[[I]]
// CHECK-NEXT: scf.yield %[[BACK]] : !stream.resource<*>

// -----

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  // A transfer in the then-branch only. The if's result lives where the
  // then-branch leaves it (device_b), so the else-branch's value, computed on
  // device_a, is staged into device_b before it is yielded.
  util.func public @transfer_in_if(%v: f32, %p: i1) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.if %p -> (!stream.resource<*>) {
      %on_b = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
      %c = stream.async.clone on(#hal.device.affinity<@device_b>) %on_b : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    } else {
      %c = stream.async.clone on(#hal.device.affinity<@device_a>) %x : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
  // The result of an scf.if lives where the then-branch's value does; read
  // on device_b after the if, it is staged there.
  util.func public @if_result_read_on_b(%v: f32, %p: i1) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.if %p -> (!stream.resource<*>) {
      scf.yield %x : !stream.resource<*>
    } else {
      %y = stream.async.clone on(#hal.device.affinity<@device_a>) %x : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      scf.yield %y : !stream.resource<*>
    }
    %c = stream.async.clone on(#hal.device.affinity<@device_b>) %r : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
    util.return %c : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @transfer_in_if(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: scf.if %{{.+}} -> (!stream.resource<*>) {
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[X]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]]
// CHECK-NEXT: %[[ON_B:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I]]
// CHECK-NEXT: %[[C:.+]] = stream.async.clone on(#hal.device.affinity<@device_b>) %[[ON_B]]
// CHECK-NEXT: scf.yield %[[C]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[C2:.+]] = stream.async.clone on(#hal.device.affinity<@device_a>) %[[X]]
// CHECK-NEXT: %[[N2:.+]] = stream.resource.size %[[C2]]
// CHECK-NEXT: %[[E2:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[C2]]
// CHECK-NEXT: %[[RES_V2:[^ ,]+]], %[[TP_V2:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E2]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V2:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V2]] => (!hal.fence)
// CHECK-NEXT: %[[V2:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V2]] : tensor<?xi8>
// CHECK-DAG:  %[[A2:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B2:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O2:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S2:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V2]], %[[READY_V2]], %[[A2]], %[[B2]], %[[O2]])
// CHECK:      %[[I2:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S2]]
// CHECK-NEXT: %[[ON_B2:.+]] = stream.async.clone on(#hal.device.affinity<@device_b>) %[[I2]]
// CHECK-NEXT: scf.yield %[[ON_B2]]
// CHECK-NEXT: }
// CHECK-NEXT: util.return
// CHECK-LABEL: util.func public @if_result_read_on_b(
// CHECK:      %[[R:.+]] = scf.if
// CHECK-NOT:  __mdc_stage
// CHECK:      } else {
// CHECK-NOT:  __mdc_stage
// CHECK:      scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[R]]
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[R]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]]
// CHECK-NEXT: %[[ON_B:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I]]
// CHECK-NEXT: stream.async.clone on(#hal.device.affinity<@device_b>) %[[ON_B]]
// CHECK-NEXT: util.return

// -----

// Transfers in both regions of an scf.while.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @transfers_in_while(%v: f32, %limit: i32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.while (%arg = %init) : (!stream.resource<*>) -> !stream.resource<*> {
      %on_a = stream.async.transfer %arg : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
      %peek = stream.async.clone on(#hal.device.affinity<@device_a>) %on_a : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      %cond = arith.cmpi slt, %limit, %limit : i32
      scf.condition(%cond) %arg : !stream.resource<*>
    } do {
    ^bb0(%body_arg: !stream.resource<*>):
      %on_a = stream.async.transfer %body_arg : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
      %c = stream.async.clone on(#hal.device.affinity<@device_a>) %on_a : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      %on_b = stream.async.transfer %c : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
      scf.yield %on_b : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @transfers_in_while(
// CHECK:      scf.while (%[[ARG:.+]] = %{{.+}}) : (!stream.resource<*>) -> !stream.resource<*> {
// CHECK-NEXT: %[[E1:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[ARG]]
// CHECK-NEXT: %[[RES_V1:[^ ,]+]], %[[TP_V1:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E1]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V1:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V1]] => (!hal.fence)
// CHECK-NEXT: %[[V1:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V1]] : tensor<?xi8>
// CHECK-DAG:  %[[B1:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[A1:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[O1:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S1:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V1]], %[[READY_V1]], %[[B1]], %[[A1]], %[[O1]])
// CHECK:      %[[I1:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S1]]
// CHECK-NEXT: %[[ON_A:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I1]] : !stream.resource<external>{%{{.+}}} -> !stream.resource<*>
// CHECK-NEXT: stream.async.clone on(#hal.device.affinity<@device_a>) %[[ON_A]]
// CHECK:      scf.condition(%{{.+}}) %[[ARG]] : !stream.resource<*>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[BODY:.+]]: !stream.resource<*>):
// CHECK-NEXT: %[[E2:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[BODY]]
// CHECK-NEXT: %[[RES_V2:[^ ,]+]], %[[TP_V2:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E2]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V2:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V2]] => (!hal.fence)
// CHECK-NEXT: %[[V2:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V2]] : tensor<?xi8>
// CHECK-DAG:  %[[B2:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[A2:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[O2:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S2:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V2]], %[[READY_V2]], %[[B2]], %[[A2]], %[[O2]])
// CHECK:      %[[I2:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S2]]
// CHECK-NEXT: %[[ON_A2:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I2]]
// CHECK-NEXT: %[[C:.+]] = stream.async.clone on(#hal.device.affinity<@device_a>) %[[ON_A2]]
// CHECK-NEXT: %[[E3:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[C]]
// CHECK-NEXT: %[[RES_V3:[^ ,]+]], %[[TP_V3:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E3]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V3:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V3]] => (!hal.fence)
// CHECK-NEXT: %[[V3:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V3]] : tensor<?xi8>
// CHECK-DAG:  %[[A3:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B3:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O3:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S3:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V3]], %[[READY_V3]], %[[A3]], %[[B3]], %[[O3]])
// CHECK:      %[[I3:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S3]]
// CHECK-NEXT: %[[ON_B:.+]] = stream.async.clone on(#hal.device.affinity<@device_b>) %[[I3]]
// CHECK-NEXT: scf.yield %[[ON_B]]
// CHECK-NOT:  stream.async.transfer
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_device_b(

// -----

// A transfer inside a util.initializer: the staging happens there too.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @on_gpu : !stream.resource<constant>
  util.initializer {
    %cst = stream.tensor.constant on(#hal.device.affinity<@device_a>) : tensor<2xi32> in !stream.resource<constant> = dense<[7, 9]> : tensor<2xi32>
    %size = stream.resource.size %cst : !stream.resource<constant>
    %moved = stream.async.transfer %cst : !stream.resource<constant>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<constant>{%size}
    util.global.store %moved, @on_gpu : !stream.resource<constant>
    util.return
  }
  util.func public @initializer_marker() {
    util.return
  }
}
// CHECK:      util.initializer {
// CHECK-NEXT: %[[CST:.+]] = stream.tensor.constant on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[CST]]
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[CST]] : !stream.resource<constant>{%[[N]]} -> !stream.resource<external>{%[[N]]}
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>{%[[N]]}
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]]
// CHECK-NEXT: %[[R:.+]] = stream.async.transfer %[[I]] : !stream.resource<external>{%[[N]]} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_b>) !stream.resource<constant>{%[[N]]}
// CHECK-NEXT: util.global.store %[[R]], @on_gpu : !stream.resource<constant>
// CHECK-NEXT: util.return
// CHECK-LABEL: util.func public @initializer_marker(
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_device_b(
