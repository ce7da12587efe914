// A move with no target whose one use is a global store goes where the global
// lives (residence.py: a store consumes its value at the global's home), and
// a global none of whose stored values has a home of its own lives where its
// loaded values are used. IREE writes such moves itself: a host twin that
// returns a value and stores it (`from` labelled with the device of the
// global's loads, not the device that made the value), and a constant it
// folds and hoists into two globals in an initializer.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s
// A second run finds nothing left to stage: the same checks hold.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion,transfer-insertion --split-input-file | FileCheck %s

// Positive: the global lives on device_a (its initializer), the value is made
// on device_b and moved into the global with no target: a crossing b -> a.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private mutable @sum : !stream.resource<variable>
  util.initializer {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %c = arith.constant 0.0 : f32
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %c : f32 -> tensor<4xf32> in !stream.resource<variable>{%size}
    util.global.store %x, @sum : !stream.resource<variable>
    util.return
  }
  util.func public @store_from_b(%v: f32) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %on_b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %moved = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> !stream.resource<variable>{%size}
    util.global.store %moved, @sum : !stream.resource<variable>
    util.return
  }
}
// CHECK-LABEL: util.func public @store_from_b(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK:      util.call @__mdc_stage_gpu_to_local_via_device_b(
// CHECK:      stream.tensor.import on(#hal.device.affinity<@device_a>)
// CHECK-NOT:  stream.async.transfer
// CHECK:      util.global.store %{{.+}}, @sum
// CHECK-NEXT: util.return

// -----

// Positive: a constant made on device_b and hoisted into a global whose one
// store is a move with no target: the global lives where its loads are used
// (device_a), so the initializer stages the value there.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @hoisted : !stream.resource<constant>
  util.initializer {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xi32> : index
    %c = arith.constant 0 : i32
    %on_b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %c : i32 -> tensor<4xi32> in !stream.resource<*>{%size}
    %moved = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> !stream.resource<constant>{%size}
    util.global.store %moved, @hoisted : !stream.resource<constant>
    util.return
  }
  util.func public @read_on_a(%size: index) -> !hal.buffer_view {
    %h = util.global.load immutable @hoisted : !stream.resource<constant>
    %c = stream.async.clone on(#hal.device.affinity<@device_a>) %h : !stream.resource<constant>{%size} -> !stream.resource<*>{%size}
    %e = stream.async.cast on(#hal.device.affinity<@device_a>) %c : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@device_a>) %e : tensor<4xi32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.initializer {
// CHECK:      stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK:      util.call @__mdc_stage_gpu_to_local_via_device_b(
// CHECK:      stream.tensor.import on(#hal.device.affinity<@device_a>)
// CHECK:      %[[H:.+]] = stream.async.transfer %{{.+}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_a>) !stream.resource<constant>
// CHECK-NEXT: util.global.store %[[H]], @hoisted
// CHECK-LABEL: util.func public @read_on_a(
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      util.return

// -----

// Negative: the value is made where the global lives (device_b, its first
// store): the move stays a move within device_b, nothing is staged.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private mutable @state : !stream.resource<variable>
  util.initializer {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %c = arith.constant 0.0 : f32
    %x = stream.tensor.splat on(#hal.device.affinity<@device_b>) %c : f32 -> tensor<4xf32> in !stream.resource<variable>{%size}
    util.global.store %x, @state : !stream.resource<variable>
    util.return
  }
  util.func public @store_on_b(%v: f32) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %on_b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %moved = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> !stream.resource<variable>{%size}
    util.global.store %moved, @state : !stream.resource<variable>
    util.return
  }
}
// CHECK-LABEL: util.func public @store_on_b(
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      stream.async.transfer %{{.+}} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_b>) !stream.resource<variable>
// CHECK-NEXT: util.global.store
// CHECK-NOT:  util.call @__mdc_stage

// -----

// A read on another device: the global lives on device_a, its load is cloned
// on device_b. The staged copy reaches the clone as `*`, not as the global's
// `variable` (which only a store takes: IREE's usage refinement runs away on
// a `variable` cast in the middle of a function).
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private mutable @kept : !stream.resource<variable>
  util.initializer {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %c = arith.constant 1.0 : f32
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %c : f32 -> tensor<4xf32> in !stream.resource<variable>{%size}
    util.global.store %x, @kept : !stream.resource<variable>
    util.return
  }
  util.func public @read_on_b(%size: index) -> !stream.resource<*> {
    %k = util.global.load @kept : !stream.resource<variable>
    %c = stream.async.clone on(#hal.device.affinity<@device_b>) %k : !stream.resource<variable>{%size} -> !stream.resource<*>{%size}
    util.return %c : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @read_on_b(
// CHECK:      %[[K:.+]] = util.global.load @kept : !stream.resource<variable>
// CHECK:      util.call @__mdc_stage_local_to_gpu_via_device_b(
// CHECK:      %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %{{.+}} : !stream.resource<external>{%{{.+}}} -> !stream.resource<*>
// CHECK-NEXT: stream.async.clone on(#hal.device.affinity<@device_b>) %[[R]] : !stream.resource<*>{%{{.+}}} -> !stream.resource<*>
