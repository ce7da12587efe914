// GPUs of different drivers (cuda, hip): no stock HAL op copies between their
// memories, so a move is staged twice through a local device the program
// declares: source GPU -> local (source GPU owns the staging memory), then
// local -> destination GPU (destination GPU owns it).
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s
// A second run finds nothing left to stage: the same checks hold.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion,transfer-insertion --split-input-file | FileCheck %s

module attributes {stream.affinity.default = #hal.device.affinity<@nv>} {
  util.global private @nv = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @amd = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.global private @host = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.func public @cuda_to_hip(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@nv>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@nv>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %y = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@nv>) -> to(#hal.device.affinity<@amd>) !stream.resource<*>{%size}
    util.return %y : !stream.resource<*>
  }
  util.func public @hip_to_cuda(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@amd>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@amd>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %y = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@amd>) -> to(#hal.device.affinity<@nv>) !stream.resource<*>{%size}
    util.return %y : !stream.resource<*>
  }
  // The local device itself is still staged with the GPUs as usual.
  util.func public @host_to_hip(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@host>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@host>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %y = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@host>) -> to(#hal.device.affinity<@amd>) !stream.resource<*>{%size}
    util.return %y : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @cuda_to_hip(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@nv>)
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@nv>) %[[X]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@nv>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@nv>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@nv>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[NV1:.+]] = util.global.load immutable @nv : !hal.device
// CHECK-DAG:  %[[H1:.+]] = util.global.load immutable @host : !hal.device
// CHECK-DAG:  %[[O1:.+]] = util.global.load immutable @nv : !hal.device
// CHECK:      %[[S1:.+]] = util.call @__mdc_stage_gpu_to_local_via_nv(%[[V]], %[[READY_V]], %[[NV1]], %[[H1]], %[[O1]])
// The second hop waits on nothing: the first returned once the host saw its copy.
// CHECK-NEXT: %[[NOWAIT:.+]] = util.null : !hal.fence
// CHECK-DAG:  %[[H2:.+]] = util.global.load immutable @host : !hal.device
// CHECK-DAG:  %[[AMD2:.+]] = util.global.load immutable @amd : !hal.device
// CHECK-DAG:  %[[O2:.+]] = util.global.load immutable @amd : !hal.device
// CHECK:      %[[S2:.+]] = util.call @__mdc_stage_local_to_gpu_via_amd(%[[S1]], %[[NOWAIT]], %[[H2]], %[[AMD2]], %[[O2]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@amd>) %[[S2]] : !hal.buffer_view -> tensor<?xi8>
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@amd>) %[[I]]
// CHECK-NEXT: util.return %[[R]]
// CHECK-LABEL: util.func public @hip_to_cuda(
// CHECK:      %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@amd>) %{{.+}} : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@amd>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@amd>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[AMD1:.+]] = util.global.load immutable @amd : !hal.device
// CHECK-DAG:  %[[H1:.+]] = util.global.load immutable @host : !hal.device
// CHECK-DAG:  %[[O1:.+]] = util.global.load immutable @amd : !hal.device
// CHECK:      %[[S1:.+]] = util.call @__mdc_stage_gpu_to_local_via_amd(%[[V]], %[[READY_V]], %[[AMD1]], %[[H1]], %[[O1]])
// The second hop waits on nothing: the first returned once the host saw its copy.
// CHECK-NEXT: %[[NOWAIT:.+]] = util.null : !hal.fence
// CHECK-DAG:  %[[H2:.+]] = util.global.load immutable @host : !hal.device
// CHECK-DAG:  %[[NV2:.+]] = util.global.load immutable @nv : !hal.device
// CHECK-DAG:  %[[O2:.+]] = util.global.load immutable @nv : !hal.device
// CHECK:      %[[S2:.+]] = util.call @__mdc_stage_local_to_gpu_via_nv(%[[S1]], %[[NOWAIT]], %[[H2]], %[[NV2]], %[[O2]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@nv>) %[[S2]]
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@nv>) %[[I]]
// CHECK-NEXT: util.return %[[R]]
// CHECK-LABEL: util.func public @host_to_hip(
// CHECK:      %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@host>) %{{.+}} : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@host>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@host>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[H:.+]] = util.global.load immutable @host : !hal.device
// CHECK-DAG:  %[[AMD:.+]] = util.global.load immutable @amd : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @amd : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_amd(%[[V]], %[[READY_V]], %[[H]], %[[AMD]], %[[O]])
// CHECK:      stream.tensor.import on(#hal.device.affinity<@amd>) %[[S]]
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_amd(

// -----

// An implicit crossing between the two GPUs (an ABI result declared on hip,
// computed on cuda) takes the same two hops.
module attributes {stream.affinity.default = #hal.device.affinity<@nv>} {
  util.global private @nv = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @amd = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.global private @host = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.func public @abi_result_cuda_to_hip(%v: f32) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@nv>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@nv>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %ext = stream.async.cast on(#hal.device.affinity<@amd>) %x : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@amd>) %ext : tensor<4xf32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.func public @abi_result_cuda_to_hip(
// CHECK:      %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@nv>) %{{.+}} : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@nv>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@nv>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[NV1:.+]] = util.global.load immutable @nv : !hal.device
// CHECK-DAG:  %[[H1:.+]] = util.global.load immutable @host : !hal.device
// CHECK-DAG:  %[[O1:.+]] = util.global.load immutable @nv : !hal.device
// CHECK:      %[[S1:.+]] = util.call @__mdc_stage_gpu_to_local_via_nv(%[[V]], %[[READY_V]], %[[NV1]], %[[H1]], %[[O1]])
// The second hop waits on nothing: the first returned once the host saw its copy.
// CHECK-NEXT: %[[NOWAIT:.+]] = util.null : !hal.fence
// CHECK-DAG:  %[[H2:.+]] = util.global.load immutable @host : !hal.device
// CHECK-DAG:  %[[AMD2:.+]] = util.global.load immutable @amd : !hal.device
// CHECK-DAG:  %[[O2:.+]] = util.global.load immutable @amd : !hal.device
// CHECK:      %[[S2:.+]] = util.call @__mdc_stage_local_to_gpu_via_amd(%[[S1]], %[[NOWAIT]], %[[H2]], %[[AMD2]], %[[O2]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@amd>) %[[S2]]
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@amd>) %[[I]]
// CHECK-NEXT: %[[E2:.+]] = stream.async.cast on(#hal.device.affinity<@amd>) %[[R]] : !stream.resource<*>{%{{.+}}} -> !stream.resource<external>
// CHECK-NEXT: stream.tensor.export on(#hal.device.affinity<@amd>) %[[E2]] : tensor<4xf32>

// -----

// Two GPUs of one driver plus a hip GPU: cuda <-> cuda is left to IREE.
module attributes {stream.affinity.default = #hal.device.affinity<@nv0>} {
  util.global private @nv0 = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @nv1 = #hal.device.target<"cuda", {ordinal = 1 : index}> : !hal.device
  util.global private @amd = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.global private @host = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.func public @same_driver_pair_untouched(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@nv0>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@nv0>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %y = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@nv0>) -> to(#hal.device.affinity<@nv1>) !stream.resource<*>{%size}
    util.return %y : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @same_driver_pair_untouched(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@nv0>)
// CHECK-NEXT: %[[Y:.+]] = stream.async.transfer %[[X]] : !stream.resource<*>{%{{.+}}} from(#hal.device.affinity<@nv0>) -> to(#hal.device.affinity<@nv1>)
// CHECK-NEXT: util.return %[[Y]]
// CHECK-NOT:  __mdc_stage
