// Dynamic sizes travel as the byte size the program already computed
// (tensor<?xi8>{size}), whatever the rank and element type; and with three
// devices only the pairs that need it are staged.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s

// Sizes from hal.buffer_view.dim of an argument, rank 2.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @dynamic_from_view(%arg0: !hal.buffer_view) -> !hal.buffer_view {
    %d0 = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[0] : index
    %d1 = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[1] : index
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<?x?xf32>{%d0, %d1} : index
    %x = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0 : !hal.buffer_view -> tensor<?x?xf32>{%d0, %d1} in !stream.resource<external>{%size}
    %on_b = stream.async.transfer %x : !stream.resource<external>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<external>{%size}
    %out = stream.tensor.export on(#hal.device.affinity<@device_b>) %on_b : tensor<?x?xf32>{%d0, %d1} in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK-LABEL: util.func public @dynamic_from_view(
// CHECK:      %[[D0:.+]] = hal.buffer_view.dim<%{{.+}} : !hal.buffer_view>[0] : index
// CHECK-NEXT: %[[D1:.+]] = hal.buffer_view.dim<%{{.+}} : !hal.buffer_view>[1] : index
// CHECK-NEXT: %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<?x?xf32>{%[[D0]], %[[D1]]} : index
// CHECK-NEXT: %[[X:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %{{.+}} : !hal.buffer_view -> tensor<?x?xf32>{%[[D0]], %[[D1]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[X]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]} -> !hal.buffer_view
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]] : !hal.buffer_view -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[OUT:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[I]] : tensor<?x?xf32>{%[[D0]], %[[D1]]} in !stream.resource<external>{%[[SIZE]]} -> !hal.buffer_view
// CHECK-NEXT: util.return %[[OUT]]

// -----

// A size from a plain function argument, GPU to CPU, rank 3 with i1 elements.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @dynamic_from_arg(%v: i1, %n: index) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<2x?x3xi1>{%n} : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : i1 -> tensor<2x?x3xi1>{%n} in !stream.resource<*>{%size}
    %on_a = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %on_a : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @dynamic_from_arg(
// CHECK-SAME: %{{.+}}: i1, %[[N:[a-z0-9_]+]]: index
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<2x?x3xi1>{%[[N]]} : index
// CHECK-NEXT: %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[X]] : !stream.resource<*>{%[[SIZE]]} -> !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V]] : tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]} -> !hal.buffer_view
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V]], %[[READY_V]], %[[B]], %[[A]], %[[O]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]] : !hal.buffer_view -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I]] : !stream.resource<external>{%[[SIZE]]} -> !stream.resource<*>{%[[SIZE]]}
// CHECK-NEXT: util.return %[[R]]

// -----

// Three devices: local, cuda, local. local <-> local stays a transfer; every
// crossing to or from the GPU is staged with the GPU as owner.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @device_c = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @three_devices(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_c = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_c>) !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_c : !stream.resource<*>{%size} from(#hal.device.affinity<@device_c>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    %c = stream.async.clone on(#hal.device.affinity<@device_b>) %on_b : !stream.resource<*>{%size} -> !stream.resource<*>{%size}
    %to_c = stream.async.transfer %c : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_c>) !stream.resource<*>{%size}
    %to_a = stream.async.transfer %to_c : !stream.resource<*>{%size} from(#hal.device.affinity<@device_c>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %to_a : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @three_devices(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[ON_C:.+]] = stream.async.transfer %[[X]] : !stream.resource<*>{%{{.+}}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_c>)
// CHECK-NEXT: %[[E1:.+]] = stream.async.cast on(#hal.device.affinity<@device_c>) %[[ON_C]]
// CHECK-NEXT: %[[RES_V1:[^ ,]+]], %[[TP_V1:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_c>) %[[E1]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V1:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_c>) %[[TP_V1]] => (!hal.fence)
// CHECK-NEXT: %[[V1:.+]] = stream.tensor.export on(#hal.device.affinity<@device_c>) %[[RES_V1]] : tensor<?xi8>
// CHECK-DAG:  %[[C1:.+]] = util.global.load immutable @device_c : !hal.device
// CHECK-DAG:  %[[B1:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[O1:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S1:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V1]], %[[READY_V1]], %[[C1]], %[[B1]], %[[O1]])
// CHECK:      %[[I1:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S1]]
// CHECK-NEXT: %[[ON_B:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I1]]
// CHECK-NEXT: %[[CL:.+]] = stream.async.clone on(#hal.device.affinity<@device_b>) %[[ON_B]]
// CHECK-NEXT: %[[E2:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[CL]]
// CHECK-NEXT: %[[RES_V2:[^ ,]+]], %[[TP_V2:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E2]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V2:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V2]] => (!hal.fence)
// CHECK-NEXT: %[[V2:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V2]] : tensor<?xi8>
// CHECK-DAG:  %[[B2:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[C2:.+]] = util.global.load immutable @device_c : !hal.device
// CHECK-DAG:  %[[O2:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S2:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V2]], %[[READY_V2]], %[[B2]], %[[C2]], %[[O2]])
// CHECK:      %[[I2:.+]] = stream.tensor.import on(#hal.device.affinity<@device_c>) %[[S2]]
// CHECK-NEXT: %[[TO_C:.+]] = stream.async.cast on(#hal.device.affinity<@device_c>) %[[I2]]
// CHECK-NEXT: %[[TO_A:.+]] = stream.async.transfer %[[TO_C]] : !stream.resource<*>{%{{.+}}} from(#hal.device.affinity<@device_c>) -> to(#hal.device.affinity<@device_a>)
// CHECK-NEXT: util.return %[[TO_A]]
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      util.func private @__mdc_stage_gpu_to_local_via_device_b(
