// --link=X:Y=staged forces staging between two devices that share memory
// (here two local devices), in both directions, with Y owning the staging
// memory. Short names (a for device_a) and full symbol names both work.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file --link=device_a:device_b=staged | FileCheck %s --check-prefixes=CHECK,OWNB
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file --link=a:b=staged | FileCheck %s --check-prefixes=CHECK,OWNB
// Reversed, the owner is device_a.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file --link=b:a=staged | FileCheck %s --check-prefixes=CHECK,OWNA
// Without the flag the pair is shared and nothing changes.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s --check-prefix=NOLINK
// And =shared on a pair that shares memory anyway is accepted and changes nothing.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file --link=a:b=shared | FileCheck %s --check-prefix=NOLINK
// NOLINK-NOT: __mdc_stage
// NOLINK-NOT: tensor<?xi8>
// NOLINK: stream.async.transfer {{.+}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>)
// NOLINK-NOT: __mdc_stage
// NOLINK: stream.async.transfer {{.+}} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>)
// NOLINK-NOT: __mdc_stage

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @forced_a_to_b(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @forced_a_to_b(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[X]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// OWNB-DAG:   %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// OWNA-DAG:   %[[OWNER:.+]] = util.global.load immutable @device_a : !hal.device
// OWNB:       %[[S:.+]] = util.call @__mdc_stage_local_to_local_via_device_b(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[OWNER]])
// OWNA:       %[[S:.+]] = util.call @__mdc_stage_local_to_local_via_device_a(%[[V]], %[[READY_V]], %[[A]], %[[B]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]]
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I]]
// CHECK-NEXT: util.return %[[R]]
// CHECK-NOT:  stream.async.transfer
// OWNB:       util.func private @__mdc_stage_local_to_local_via_device_b(
// OWNA:       util.func private @__mdc_stage_local_to_local_via_device_a(

// -----

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @forced_b_to_a(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %on_b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_a = stream.async.transfer %on_b : !stream.resource<*>{%size} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%size}
    util.return %on_a : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @forced_b_to_a(
// CHECK-NOT:  stream.async.transfer
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[X]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[A:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[B:.+]] = util.global.load immutable @device_b : !hal.device
// OWNB-DAG:   %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// OWNA-DAG:   %[[OWNER:.+]] = util.global.load immutable @device_a : !hal.device
// OWNB:       %[[S:.+]] = util.call @__mdc_stage_local_to_local_via_device_b(%[[V]], %[[READY_V]], %[[B]], %[[A]], %[[OWNER]])
// OWNA:       %[[S:.+]] = util.call @__mdc_stage_local_to_local_via_device_a(%[[V]], %[[READY_V]], %[[B]], %[[A]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]]
// CHECK-NEXT: %[[R:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I]]
// CHECK-NEXT: util.return %[[R]]
// CHECK-NOT:  stream.async.transfer
// OWNB:       util.func private @__mdc_stage_local_to_local_via_device_b(
// OWNA:       util.func private @__mdc_stage_local_to_local_via_device_a(
