// partition-fence: in a module with a staged pair, right after every
// scf.for, scf.while, scf.if and scf.index_switch that has results, in a
// block holding stream ops (the blocks IREE partitions; an scf.if alone in
// a loop body, or in a helper written in HAL ops, needs none), a
// util.optimization_barrier of an index constant, which IREE's
// partitioner treats as a side effect it never moves ops across: no
// execution region then spans the region op (IREE 3.13.0 can form one that
// both feeds and reads a loop: test/lit/regress/staged_circular_dependency.mlir).
// Region ops without results, and modules whose devices all share memory,
// are left alone.
// RUN: mdc-opt %s --pass=partition-fence --split-input-file | FileCheck %s
// RUN: mdc-opt %s --pass=partition-fence --split-input-file --link=a:b=staged | FileCheck %s --check-prefix=FORCED

// CHECK-LABEL: util.func public @loops_and_ifs(
// CHECK:      %[[R:.+]]:2 = scf.for
// CHECK:        %[[IN:.+]] = scf.if
// CHECK:        } else {
// CHECK:        }
// CHECK-NEXT:   scf.yield
// CHECK:      }
// CHECK-NEXT: %[[Z2:.+]] = arith.constant 0 : index
// CHECK-NEXT: util.optimization_barrier %[[Z2]] : index
// CHECK-NEXT: %[[AFTER:.+]] = stream.async.clone on(#hal.device.affinity<@device_a>) %[[R]]#0
// CHECK:      scf.while
// CHECK:      } do {
// CHECK:      }
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: util.optimization_barrier
// CHECK:      scf.index_switch
// CHECK:      default {
// CHECK:      }
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: util.optimization_barrier
// CHECK-NEXT: util.return
// CHECK-LABEL: util.func public @no_results(
// CHECK-NOT:  util.optimization_barrier
// CHECK:      util.return
// CHECK-LABEL: util.func private @no_stream_ops(
// CHECK-NOT:  util.optimization_barrier
// CHECK:      util.return
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @loops_and_ifs(%v: f32, %n: index, %p: i1, %k: index) -> (!stream.resource<*>, !stream.resource<*>, index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init, %m = %c0) -> (!stream.resource<*>, index) {
      %c = scf.if %p -> (!stream.resource<*>) {
        %x = stream.async.clone on(#hal.device.affinity<@device_a>) %acc : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
        scf.yield %x : !stream.resource<*>
      } else {
        scf.yield %acc : !stream.resource<*>
      }
      scf.yield %c, %m : !stream.resource<*>, index
    }
    %after = stream.async.clone on(#hal.device.affinity<@device_a>) %r#0 : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
    %w = scf.while (%a = %after) : (!stream.resource<*>) -> !stream.resource<*> {
      scf.condition(%p) %a : !stream.resource<*>
    } do {
    ^bb0(%x: !stream.resource<*>):
      scf.yield %x : !stream.resource<*>
    }
    %s = scf.index_switch %k -> index
    case 1 {
      scf.yield %c1 : index
    }
    default {
      scf.yield %c0 : index
    }
    util.return %after, %w, %s : !stream.resource<*>, !stream.resource<*>, index
  }
  // Region ops whose results nothing can read: no fence.
  util.func public @no_results(%n: index, %p: i1) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      scf.if %p {
      }
    }
    util.return
  }
  // No stream ops in the block (as in transfer-insertion's HAL helpers).
  util.func private @no_stream_ops(%p: i1, %a: index, %b: index) -> index {
    %r = scf.if %p -> index {
      scf.yield %a : index
    } else {
      scf.yield %b : index
    }
    util.return %r : index
  }
}

// -----

// Two local devices share memory: untouched, unless --link forces staging.
// CHECK-LABEL: util.func public @local_pair(
// CHECK-NOT:  util.optimization_barrier
// CHECK:      util.return
// FORCED-LABEL: util.func public @local_pair(
// FORCED:      scf.for
// FORCED:      util.optimization_barrier
// FORCED-NEXT: util.return
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @local_pair(%v: f32, %n: index) -> !stream.resource<*> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %init = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!stream.resource<*>) {
      %c = stream.async.clone on(#hal.device.affinity<@device_b>) %acc : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
      scf.yield %c : !stream.resource<*>
    }
    util.return %r : !stream.resource<*>
  }
}

// -----

// A transfer whose source the host waited for by a stream.timepoint.barrier
// earlier in its block reads the barrier's result (IREE otherwise puts the
// transfer in its source producer's execution region, which then runs after
// the host code between them: test/lit/regress/constant_to_staged_and_shared_device.mlir).
// A transfer before the barrier keeps its source.
// CHECK-LABEL: util.func public @staged_and_shared(
// CHECK:      %[[K:.+]] = stream.async.clone on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[EARLY:.+]] = stream.async.transfer %[[K]] :
// CHECK-NEXT: %[[READY:.+]], %{{.+}} = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[K]]
// CHECK:      util.call @host_copy(
// CHECK-NEXT: %[[LATE:.+]] = stream.async.transfer %[[READY]] :
// CHECK-NEXT: util.return %[[EARLY]], %[[LATE]]
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @device_c = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func private @host_copy(%f: !hal.fence)
  util.func public @staged_and_shared(%v: f32) -> (!stream.resource<*>, !stream.resource<*>) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %s = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %k = stream.async.clone on(#hal.device.affinity<@device_a>) %s : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
    %early = stream.async.transfer %k : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_c>) !stream.resource<*>{%size}
    %ready, %t = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %k : !stream.resource<*>{%size} => !stream.timepoint
    %f = stream.timepoint.export on(#hal.device.affinity<@device_a>) %t => (!hal.fence)
    util.call @host_copy(%f) : (!hal.fence) -> ()
    %late = stream.async.transfer %k : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_c>) !stream.resource<*>{%size}
    util.return %early, %late : !stream.resource<*>, !stream.resource<*>
  }
}
