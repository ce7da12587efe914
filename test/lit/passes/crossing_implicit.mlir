// Values that cross devices without any transfer (DESIGN.md section 3, shapes
// 2 and 4): an op on B consuming a value that lives on A gets a staged copy in
// between; an op on A consuming it does not.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s
// A second run finds nothing left to stage: the same checks hold.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion,transfer-insertion --split-input-file | FileCheck %s

// An ABI result declared on the GPU but computed on the CPU.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @abi_result_on_gpu(%v: f32) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %ext = stream.async.cast on(#hal.device.affinity<@device_b>) %on_a : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@device_b>) %ext : tensor<4xf32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.func public @abi_result_on_gpu(
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32>
// CHECK-NEXT: %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[X]] : !stream.resource<*>
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[X]] : !stream.resource<*>{%[[N]]} -> !stream.resource<external>{%[[N]]}
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>{%[[N]]} in !stream.resource<external>{%[[N]]} -> !hal.buffer_view
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]] : !hal.buffer_view -> tensor<?xi8>{%[[N]]} in !stream.resource<external>{%[[N]]}
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I]] : !stream.resource<external>{%[[N]]} -> !stream.resource<*>{%[[N]]}
// The original ABI cast now reads the staged copy.
// CHECK-NEXT: %[[E2:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[R]] : !stream.resource<*>{%[[SIZE]]} -> !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[OUT:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[E2]] : tensor<4xf32>
// CHECK-NEXT: util.return %[[OUT]]
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_device_b(

// -----

// The other way: computed on the GPU, an ABI result declared on the CPU.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @abi_result_on_cpu(%v: f32) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<3x5xi32> : index
    %on_b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<3x5xi32> in !stream.resource<*>{%size}
    %ext = stream.async.cast on(#hal.device.affinity<@device_a>) %on_b : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@device_a>) %ext : tensor<3x5xi32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.func public @abi_result_on_cpu(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[X]]
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[X]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V]], %[[READY_V]], %[[B]], %[[A]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]]
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I]] : !stream.resource<external>{%[[N]]} -> !stream.resource<*>{%[[N]]}
// CHECK-NEXT: %[[E2:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[R]]
// CHECK-NEXT: stream.tensor.export on(#hal.device.affinity<@device_a>) %[[E2]] : tensor<3x5xi32>
// CHECK:      util.func private @__mdc_stage_gpu_to_local_via_device_b(

// -----

// A global stored in an initializer from a constant on the CPU, read on the
// GPU in one function (staged, cast back to the global's lifetime) and on the
// CPU in another (untouched). The initializer itself is untouched.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @weights : !stream.resource<constant>
  util.global private @weights__size : index
  util.initializer {
    %cst = stream.tensor.constant on(#hal.device.affinity<@device_a>) : tensor<4xf32> in !stream.resource<constant> = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %size = stream.resource.size %cst : !stream.resource<constant>
    util.global.store %cst, @weights : !stream.resource<constant>
    util.global.store %size, @weights__size : index
    util.return
  }
  util.func public @global_read_on_gpu() -> !stream.resource<*> {
    %w = util.global.load immutable @weights : !stream.resource<constant>
    %ws = util.global.load immutable @weights__size : index
    %c = stream.async.clone on(#hal.device.affinity<@device_b>) %w : !stream.resource<constant>{%ws} -> !stream.resource<*>{%ws}
    util.return %c : !stream.resource<*>
  }
  util.func public @global_read_on_cpu() -> !stream.resource<*> {
    %w = util.global.load immutable @weights : !stream.resource<constant>
    %ws = util.global.load immutable @weights__size : index
    %c = stream.async.clone on(#hal.device.affinity<@device_a>) %w : !stream.resource<constant>{%ws} -> !stream.resource<*>{%ws}
    util.return %c : !stream.resource<*>
  }
}
// CHECK:      util.initializer {
// CHECK-NEXT: %[[CST:.+]] = stream.tensor.constant on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: stream.resource.size %[[CST]]
// CHECK-NEXT: util.global.store %[[CST]], @weights
// CHECK-NEXT: util.global.store
// CHECK-NEXT: util.return
// CHECK-LABEL: util.func public @global_read_on_gpu(
// CHECK:      %[[W:.+]] = util.global.load immutable @weights : !stream.resource<constant>
// CHECK-NEXT: %[[WS:.+]] = util.global.load immutable @weights__size : index
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[W]] : !stream.resource<constant>
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[W]] : !stream.resource<constant>{%[[N]]} -> !stream.resource<external>{%[[N]]}
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>{%[[N]]}
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]]
// CHECK-NEXT: %[[R:.+]] = stream.async.transfer %[[I]] : !stream.resource<external>{%[[N]]} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_b>) !stream.resource<constant>{%[[N]]}
// CHECK-NEXT: %[[C:.+]] = stream.async.clone on(#hal.device.affinity<@device_b>) %[[R]] : !stream.resource<constant>{%[[WS]]} -> !stream.resource<*>{%[[WS]]}
// CHECK-NEXT: util.return %[[C]]
// CHECK-LABEL: util.func public @global_read_on_cpu(
// CHECK:      %[[W:.+]] = util.global.load immutable @weights : !stream.resource<constant>
// CHECK-NEXT: %[[WS:.+]] = util.global.load immutable @weights__size : index
// CHECK-NEXT: %[[C:.+]] = stream.async.clone on(#hal.device.affinity<@device_a>) %[[W]] : !stream.resource<constant>{%[[WS]]} -> !stream.resource<*>{%[[WS]]}
// CHECK-NEXT: util.return %[[C]]
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_device_b(

// -----

// A mutable global written on the GPU inside a function and read on the CPU.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private mutable @state : !stream.resource<variable>
  util.func public @write_state_on_gpu(%v: f32) {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<8xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<8xf32> in !stream.resource<*>{%size}
    %var = stream.async.clone on(#hal.device.affinity<@device_b>) %x : !stream.resource<*>{%size} -> !stream.resource<variable>{%size}
    util.global.store %var, @state : !stream.resource<variable>
    util.return
  }
  util.func public @read_state_on_cpu(%size: index) -> !stream.resource<*> {
    %s = util.global.load @state : !stream.resource<variable>
    %c = stream.async.clone on(#hal.device.affinity<@device_a>) %s : !stream.resource<variable>{%size} -> !stream.resource<*>{%size}
    util.return %c : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @write_state_on_gpu(
// CHECK-NOT:  __mdc_stage
// CHECK:      util.global.store %{{.+}}, @state
// CHECK-LABEL: util.func public @read_state_on_cpu(
// CHECK:      %[[ST:.+]] = util.global.load @state : !stream.resource<variable>
// CHECK:      %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %{{.+}} : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V]], %[[READY_V]], %[[B]], %[[A]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]]
// A read takes the copy as `*`; only a store takes a global's `variable`
// (stage_crossings._staged_type: IREE's usage refinement runs away on the
// cast, iree_refine_usage_variable_cast.test).
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I]] : !stream.resource<external>{%{{.+}}} -> !stream.resource<*>
// CHECK-NEXT: stream.async.clone on(#hal.device.affinity<@device_a>) %[[R]] : !stream.resource<*>
