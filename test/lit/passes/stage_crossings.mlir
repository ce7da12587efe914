// stage-crossings alone (the second step of transfer-insertion) on placed
// IR: a crossing between a CPU and a GPU is lowered (here by the copy
// lowering, --staging=copy), a pair that shares memory is left to IREE.
// RUN: mdc-opt %s --staging=copy --pass=stage-crossings --split-input-file | FileCheck %s
// And place-unplaced-ops followed by stage-crossings is transfer-insertion,
// on this file and on residence.mlir's unplaced ops, in both lowerings.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-opt %s --pass=place-unplaced-ops,stage-crossings --split-input-file > %t/steps.mlir
// RUN: mdc-opt %s --pass=transfer-insertion --split-input-file > %t/combined.mlir
// RUN: diff %t/steps.mlir %t/combined.mlir
// RUN: mdc-opt %S/residence.mlir --staging=copy --pass=place-unplaced-ops,stage-crossings --split-input-file > %t/placement_steps.mlir
// RUN: mdc-opt %S/residence.mlir --staging=copy --pass=transfer-insertion --split-input-file > %t/placement_combined.mlir
// RUN: diff %t/placement_steps.mlir %t/placement_combined.mlir
// RUN: mdc-opt %S/staging_emplace.mlir --pass=place-unplaced-ops,stage-crossings --split-input-file > %t/emplace_steps.mlir
// RUN: mdc-opt %S/staging_emplace.mlir --pass=transfer-insertion --split-input-file > %t/emplace_combined.mlir
// RUN: diff %t/emplace_steps.mlir %t/emplace_combined.mlir

// Positive: local -> cuda goes through the host staging call.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @local_to_cuda(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %0 = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %1 = stream.async.transfer %0 : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %1 : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @local_to_cuda(
// CHECK:       stream.tensor.export on(#hal.device.affinity<@device_a>)
// CHECK:       util.call @__mdc_stage_local_to_gpu_via_device_b(
// CHECK:       stream.tensor.import on(#hal.device.affinity<@device_b>)
// CHECK-NOT:   stream.async.transfer
// CHECK:       util.return
// CHECK:       util.func private @__mdc_stage_local_to_gpu_via_device_b(

// -----

// Negative: two local devices share memory; the transfer stays as it was.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.func public @local_local(%v: f32) -> !stream.resource<*> {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %on_a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %on_b = stream.async.transfer %on_a : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @local_local(
// CHECK-NOT:   __mdc_stage
// CHECK:       stream.async.transfer %{{.+}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>)
// CHECK-NEXT:  util.return
