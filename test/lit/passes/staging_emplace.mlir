// transfer-insertion with --staging=emplace: a value on a CPU device going to
// the device that owns the staging memory (the GPU) is written straight into
// that device's pinned staging buffer on the CPU (stream.async.update into
// the buffer, imported with `consume`, which IREE's allocation turns into the
// producer writing there), and the staging call only waits for it on the host
// and copies it on the GPU's queue. Moves the other way, and the default
// (--staging=copy), keep the copying lowering.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=emplace | FileCheck %s
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion | FileCheck %s --check-prefix=COPY
// A forced staged pair of CPUs, owner device_b: the same lowering a -> b.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=emplace --link=a:b=staged | FileCheck %s --check-prefix=CHECK

// CHECK-LABEL: util.func public @there_and_back(
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32>
// CHECK-NEXT: %[[SRC:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-NEXT: %[[PV:.+]] = util.call @__mdc_stage_pinned_site_view(%[[SIZE]], %[[OWNER]]) : (index, !hal.device) -> !hal.buffer_view
// CHECK-NEXT: %[[PIN:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %[[PV]] : !hal.buffer_view -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[FILLED:.+]] = stream.async.update on(#hal.device.affinity<@device_a>) %[[SRC]], %[[PIN]][%[[C0]] to %[[SIZE]]] : !stream.resource<*>{%[[SIZE]]} -> %[[PIN]] as !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[RES:[^ ,]+]], %[[TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[FILLED]]
// CHECK-NEXT: %[[READY:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP]] => (!hal.fence)
// CHECK-NEXT: %[[VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES]] : tensor<?xi8>{%[[SIZE]]}
// CHECK-NEXT: %[[DST:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-NEXT: %[[STAGED:.+]] = util.call @__mdc_stage_from_pinned(%[[VIEW]], %[[READY]], %[[DST]]) : (!hal.buffer_view, !hal.fence, !hal.device) -> !hal.buffer_view
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_b>) %[[STAGED]]
// The way back (the GPU owns the staging memory): copied as before.
// CHECK:      util.call @__mdc_stage_{{gpu|local}}_to_local_via_device_b(
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      util.return
// Each crossing site has its own pinned buffer (IREE may run two producers
// together), kept by its own helper.
// CHECK-LABEL: util.func public @two_sites(
// CHECK:      util.call @[[SITE1:__mdc_stage_pinned_site_[0-9]+_view]](
// CHECK:      util.call @__mdc_stage_from_pinned(
// CHECK-NOT:  util.call @[[SITE1]](
// CHECK:      util.call @__mdc_stage_pinned_site_{{[0-9]+}}_view(
// CHECK:      util.call @__mdc_stage_from_pinned(
// CHECK-LABEL: util.func public @also_used_here(
// CHECK-NOT:  pinned_site
// CHECK:      util.call @__mdc_stage_local_to_gpu_via_device_b(
// The helpers: a site's pinned buffer as a view (allocated and grown as by
// the copying helper, usable by a CPU dispatch), and the copy out of it.
// CHECK-DAG:  util.func private @__mdc_stage_pinned_view(
// CHECK-DAG:  hal.buffer_usage<"{{.*}}DispatchStorage{{.*}}MappingPersistent{{.*}}">
// CHECK-DAG:  util.func private @__mdc_stage_from_pinned(

// COPY-LABEL: util.func public @there_and_back(
// COPY-NOT:   pinned_view
// COPY:       util.call @__mdc_stage_{{gpu|local}}_to_{{gpu|local}}_via_device_b(
// COPY:       util.call @__mdc_stage_{{gpu|local}}_to_local_via_device_b(
// COPY-NOT:   pinned_view
