// loop-init-isolation: in a module with a staged pair, in each loop
// (scf.for, scf.while) whose back edge carries a staged value (what an
// @__mdc_stage call returned, imported), every unrefined resource the loop
// starts from is exported, passed through util.optimization_barrier and
// imported again on its own device, so IREE's allocation cannot hand the loop
// a subrange at a packed offset (which IREE 3.13.0 then loses:
// test/lit/regress/iree_loop_init_packed_offset.test). Loops carrying no
// staged value (an imported init against transient yields is a mismatch IREE
// cannot reconcile), non-resource inits, inits of unknown home and modules
// whose devices all share memory are left alone.
// RUN: mdc-opt %s --pass=loop-init-isolation --split-input-file | FileCheck %s
// RUN: mdc-opt %s --pass=loop-init-isolation --split-input-file --link=a:b=staged | FileCheck %s --check-prefix=FORCED

// CHECK-LABEL: util.func public @for_on_gpu(
// CHECK:      %[[INIT:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[INIT]] : !stream.resource<*>
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[INIT]] : !stream.resource<*>{%[[N]]} -> !stream.resource<external>{%[[N]]}
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[E]] : tensor<?xi8>{%[[N]]} in !stream.resource<external>{%[[N]]} -> !hal.buffer_view
// CHECK-NEXT: %[[B:.+]] = util.optimization_barrier %[[V]] : !hal.buffer_view
// CHECK-NEXT: %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[B]] : !hal.buffer_view -> tensor<?xi8>{%[[N]]} in !stream.resource<external>{%[[N]]}
// CHECK-NEXT: %[[R:.+]] = stream.async.clone on(#hal.device.affinity<@device_b>) %[[I]] : !stream.resource<external>{%[[N]]} -> !stream.resource<*>{%[[N]]}
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[R]], %{{.+}} = %{{.+}}) -> (!stream.resource<*>, index)
// CHECK-LABEL: util.func public @while_on_cpu(
// CHECK:      stream.tensor.export on(#hal.device.affinity<@device_a>)
// CHECK:      util.optimization_barrier
// CHECK:      stream.tensor.import on(#hal.device.affinity<@device_a>)
// CHECK:      scf.while
// CHECK-LABEL: util.func public @not_staged(
// CHECK-NOT:  util.optimization_barrier
// CHECK:      scf.for
// CHECK-NOT:  util.optimization_barrier
// CHECK:      scf.for
// CHECK-LABEL: util.func private @unknown_home(
// CHECK-NOT:  util.optimization_barrier
// CHECK:      scf.for
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @for_on_gpu(%v: f32, %n: index) -> !stream.resource<*> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init, %k = %c0) -> (!stream.resource<*>, index) {
      %e = stream.async.cast on(#hal.device.affinity<@device_b>) %acc : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
      %w = stream.tensor.export on(#hal.device.affinity<@device_b>) %e : tensor<?xi8>{%size} in !stream.resource<external>{%size} -> !hal.buffer_view
      %s = util.call @__mdc_stage_gpu_to_gpu(%w) {mdc.staged} : (!hal.buffer_view) -> !hal.buffer_view
      %im = stream.tensor.import on(#hal.device.affinity<@device_b>) %s : !hal.buffer_view -> tensor<?xi8>{%size} in !stream.resource<external>{%size}
      %c = stream.async.clone on(#hal.device.affinity<@device_b>) %im : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
      scf.yield %c, %k : !stream.resource<*>, index
    }
    util.return %r#0 : !stream.resource<*>
  }
  util.func private @__mdc_stage_gpu_to_gpu(%v: !hal.buffer_view) -> !hal.buffer_view
  util.func public @while_on_cpu(%v: f32, %stop: i1) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.while (%acc = %init) : (!stream.resource<*>) -> !stream.resource<*> {
      scf.condition(%stop) %acc : !stream.resource<*>
    } do {
    ^bb0(%x: !stream.resource<*>):
      %e = stream.async.cast on(#hal.device.affinity<@device_a>) %x : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
      %w = stream.tensor.export on(#hal.device.affinity<@device_a>) %e : tensor<?xi8>{%size} in !stream.resource<external>{%size} -> !hal.buffer_view
      %s = util.call @__mdc_stage_gpu_to_gpu(%w) {mdc.staged} : (!hal.buffer_view) -> !hal.buffer_view
      %im = stream.tensor.import on(#hal.device.affinity<@device_a>) %s : !hal.buffer_view -> tensor<?xi8>{%size} in !stream.resource<external>{%size}
      %c = stream.async.cast on(#hal.device.affinity<@device_a>) %im : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
  // A loop whose back edge carries a plain copy, and one whose back edge
  // carries an argument the ABI imported (not staged): left to IREE.
  util.func public @not_staged(%v: f32, %n: index, %arg: !hal.buffer_view) -> (!stream.resource<*>, !stream.resource<*>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!stream.resource<*>) {
      %c = stream.async.clone on(#hal.device.affinity<@device_b>) %acc : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    }
    %im = stream.tensor.import on(#hal.device.affinity<@device_b>) %arg : !hal.buffer_view -> tensor<4xf32> in !stream.resource<external>{%size}
    %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!stream.resource<*>) {
      %c = stream.async.cast on(#hal.device.affinity<@device_b>) %im : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    }
    util.return %r, %r2 : !stream.resource<*>, !stream.resource<*>
  }
  // An internal function's argument: no home, left to IREE.
  util.func private @unknown_home(%x: !stream.resource<*>, %size: index, %n: index) -> !stream.resource<*> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (!stream.resource<*>) {
      %c = stream.async.clone on(#hal.device.affinity<@device_a>) %acc : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
}

// -----

// Two local devices share memory: untouched, unless --link forces staging.
// CHECK-LABEL: util.func public @local_pair(
// CHECK-NOT:  util.optimization_barrier
// CHECK:      scf.for
// FORCED-LABEL: util.func public @local_pair(
// FORCED:      util.optimization_barrier
// FORCED:      scf.for
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @local_pair(%v: f32, %n: index) -> !stream.resource<*> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!stream.resource<*>) {
      %e = stream.async.cast on(#hal.device.affinity<@device_b>) %acc : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
      %w = stream.tensor.export on(#hal.device.affinity<@device_b>) %e : tensor<?xi8>{%size} in !stream.resource<external>{%size} -> !hal.buffer_view
      %s = util.call @__mdc_stage_x(%w) {mdc.staged} : (!hal.buffer_view) -> !hal.buffer_view
      %im = stream.tensor.import on(#hal.device.affinity<@device_b>) %s : !hal.buffer_view -> tensor<?xi8>{%size} in !stream.resource<external>{%size}
      %c = stream.async.clone on(#hal.device.affinity<@device_b>) %im : !stream.resource<external>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
  util.func private @__mdc_stage_x(%v: !hal.buffer_view) -> !hal.buffer_view
}
