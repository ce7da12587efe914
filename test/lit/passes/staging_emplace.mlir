// transfer-insertion with --staging=emplace: the CPU side of a staged
// crossing reads and writes the pinned staging memory with its own
// dispatches, which run on all its workers (a local-task queue copy runs on
// one thread). Going to the device that owns the staging memory, the value's
// producing dispatch writes it there (stream.async.update into the buffer,
// imported with `consume`, which IREE's allocation turns into the producer
// writing there), or, for any other value, a byte-copy dispatch does; the
// staging call only waits for it on the host and copies it on the GPU's
// queue. Coming back, the GPU's queue copies into the pinned buffer and a
// copy dispatch on the CPU copies it out. --staging=copy, and staging in
// initializers, keep the copying lowering.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=emplace | FileCheck %s
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=copy | FileCheck %s --check-prefix=COPY
// It is the default.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion | FileCheck %s
// A forced staged pair of CPUs, owner device_b: the same lowering a -> b.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=emplace --link=a:b=staged | FileCheck %s --check-prefix=CHECK
// --staging-pieces=N (1, the default; above 1 for investigation only, see
// staging_template.STAGING_CHUNKS): N copy dispatches, each reading the
// whole value at its offset and fenced on its own, and an N-fence helper
// that starts each piece's GPU copy once that piece is written.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging-pieces=2 | FileCheck %s --check-prefix=TWO
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging-pieces=4 | FileCheck %s --check-prefix=FOUR

// CHECK-LABEL: util.func public @there_and_back(
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32>
// CHECK:      %[[SRC:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @negate::@negate_4xf32
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
// The way back: a second site's pinned buffer, filled on device_b's queue,
// copied out by a copy dispatch on device_a, which the host waits for
// before the buffer can be reused.
// CHECK:      %[[PV2:.+]] = util.call @__mdc_stage_pinned_site_1_view(%[[SIZE]],
// CHECK:      %[[BACK_VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>)
// CHECK:      util.call @__mdc_stage_copy_into_pinned(%[[BACK_VIEW]], %{{.+}}, %[[PV2]], %{{.+}}) : (!hal.buffer_view, !hal.fence, !hal.buffer_view, !hal.device) -> ()
// CHECK-NEXT: %[[BACK:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[PV2]] : !hal.buffer_view -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK:      %[[BACK_ANY:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[BACK]]
// CHECK-NEXT: %[[COPIED:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @[[COPY_A:__mdc_copy_on_device_a]]::@__mdc_copy_on_device_a_bytes[%[[SIZE]]](%[[BACK_ANY]], %[[SIZE]], %{{.+}}, %[[SIZE]]) : (tensor<?xi8>{%[[SIZE]]} in !stream.resource<*>{%[[SIZE]]}, index, index, index) -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<*>{%[[SIZE]]}
// CHECK-NEXT: %[[OUT:[^ ,]+]], %[[OUT_TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[COPIED]]
// CHECK-NEXT: %[[DONE:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[OUT_TP]] => (!hal.fence)
// CHECK-NEXT: util.call @__mdc_stage_await(%[[DONE]]) : (!hal.fence) -> ()
// CHECK-NEXT: util.return %[[OUT]] : !stream.resource<*>
// A splat is no dispatch: a copy dispatch writes it into pinned memory, and
// the staging call waits for it on the host and copies it on the GPU's
// queue. Each crossing site has its own pinned buffer (IREE may run two
// producers together), kept by its own helper.
// CHECK-LABEL: util.func public @two_sites(
// CHECK:      %[[X:.+]] = stream.tensor.splat
// CHECK:      util.call @[[SITE1:__mdc_stage_pinned_site_[0-9]+_view]](
// CHECK:      %[[C:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @[[COPY_A]]::@__mdc_copy_on_device_a_bytes[%[[XSIZE:.+]]](%[[X]],
// CHECK-NEXT: stream.async.update on(#hal.device.affinity<@device_a>) %[[C]], %{{.+}}[%{{.+}} to %[[XSIZE]]]
// CHECK-NEXT: stream.timepoint.barrier
// CHECK-NEXT: %[[F:.+]] = stream.timepoint.export
// CHECK-NOT:  stream.tensor.dispatch
// CHECK:      util.call @__mdc_stage_from_pinned(%{{.+}}, %[[F]], %{{.+}}) : (!hal.buffer_view, !hal.fence, !hal.device) -> !hal.buffer_view
// CHECK-NOT:  util.call @[[SITE1]](
// CHECK:      util.call @__mdc_stage_pinned_site_{{[0-9]+}}_view(
// CHECK:      util.call @__mdc_stage_from_pinned(
// CHECK-LABEL: util.func public @also_used_here(
// CHECK:      %[[P:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @negate::@negate_4xf32
// CHECK:      %[[PCOPY:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @[[COPY_A]]::@__mdc_copy_on_device_a_bytes[%{{.+}}](%[[P]],
// CHECK:      stream.async.update on(#hal.device.affinity<@device_a>) %[[PCOPY]],
// CHECK:      util.return %[[P]],
// CHECK:      util.initializer {
// CHECK-NOT:  pinned_site
// CHECK:      util.call @__mdc_stage_local_to_gpu_via_device_b(
// The helpers: a site's pinned buffer as a view (allocated and grown as by
// the copying helper, usable by a CPU dispatch), the copies in and out of
// it, the host wait, and the byte-copy executable, one per CPU device.
// CHECK-DAG:  util.func private @__mdc_stage_pinned_view(
// CHECK-DAG:  hal.buffer_usage<"{{.*}}DispatchStorage{{.*}}MappingPersistent{{.*}}">
// CHECK-DAG:  util.func private @__mdc_stage_from_pinned(
// CHECK-DAG:  util.func private @__mdc_stage_copy_into_pinned(
// CHECK-DAG:  util.func private @__mdc_stage_await(
// CHECK-DAG:  stream.executable private @[[COPY_A]] {
// CHECK-DAG:  iree_tensor_ext.dispatch.tensor.store %{{.+}}, %{{.+}}, offsets = [0], sizes = [%{{.+}}], strides = [1] : tensor<?xi8>

// COPY-LABEL: util.func public @there_and_back(
// COPY-NOT:   pinned_view
// COPY:       util.call @__mdc_stage_{{gpu|local}}_to_{{gpu|local}}_via_device_b(
// COPY:       util.call @__mdc_stage_{{gpu|local}}_to_local_via_device_b(
// COPY-NOT:   pinned_view

// TWO-LABEL: util.func public @two_sites(
// TWO:       %[[X:.+]] = stream.tensor.splat
// TWO:       stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @__mdc_copy_on_device_a::@__mdc_copy_on_device_a_bytes[%{{.+}}](%[[X]],
// TWO:       %[[F0:.+]] = stream.timepoint.export
// TWO:       stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @__mdc_copy_on_device_a::@__mdc_copy_on_device_a_bytes[%{{.+}}](%[[X]],
// TWO:       %[[F1:.+]] = stream.timepoint.export
// TWO-NOT:   stream.tensor.dispatch
// TWO:       util.call @__mdc_stage_from_pinned_2_pieces(%{{.+}}, %[[F0]], %[[F1]], %{{.+}}, %{{.+}}) : (!hal.buffer_view, !hal.fence, !hal.fence, index, !hal.device) -> !hal.buffer_view
// TWO-NOT:   from_pinned_4_pieces

// FOUR-LABEL: util.func public @two_sites(
// FOUR:       %[[X:.+]] = stream.tensor.splat
// FOUR:       %[[CHUNK:.+]] = arith.muli %{{.+}}, %c64 : index
// FOUR:       %[[P0:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @__mdc_copy_on_device_a::@__mdc_copy_on_device_a_bytes[%[[L0:.+]]](%[[X]], %{{.+}}, %[[O0:.+]], %[[L0]])
// FOUR-NEXT:  stream.async.update on(#hal.device.affinity<@device_a>) %[[P0]], %{{.+}}[%[[O0]] to
// FOUR-NEXT:  stream.timepoint.barrier
// FOUR-NEXT:  %[[F0:.+]] = stream.timepoint.export
// FOUR-COUNT-3: stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @__mdc_copy_on_device_a::@__mdc_copy_on_device_a_bytes
// FOUR:       util.call @__mdc_stage_from_pinned_4_pieces(%{{.+}}, %[[F0]], %{{.+}}, %{{.+}}, %{{.+}}, %[[CHUNK]], %{{.+}}) : (!hal.buffer_view, !hal.fence, !hal.fence, !hal.fence, !hal.fence, index, !hal.device) -> !hal.buffer_view
// FOUR:       util.func private @__mdc_stage_from_pinned_4_pieces(
// FOUR-COUNT-4: hal.device.queue.copy
