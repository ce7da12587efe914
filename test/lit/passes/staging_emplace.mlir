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
// initializers, keep the copying lowering. The values here are 128 KiB
// (32768 x f32), above SMALL_CROSSING_BYTES: small crossings are read and
// written in place instead (small_crossings.mlir).
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=emplace | FileCheck %s
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=copy | FileCheck %s --check-prefix=COPY
// It is the default.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion | FileCheck %s
// A forced staged pair of CPUs, owner device_b: the same lowering a -> b.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=emplace --link=a:b=staged | FileCheck %s --check-prefix=CHECK
// --staging-pieces=N (1 is the default; see staging_template.STAGING_CHUNKS):
// N copy dispatches, each reading the
// whole value at its offset and writing into its own import of the pinned
// view that the previous piece's helper returned, so the host issues every
// piece after the previous one's helper (no piece's queue work waits on an
// earlier piece's fence); each helper starts its piece's GPU copy, and a last
// helper waits for all of them.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging-pieces=2 | FileCheck %s --check-prefix=TWO
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging-pieces=4 | FileCheck %s --check-prefix=FOUR

// CHECK-LABEL: util.func public @there_and_back(
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<32768xf32>
// CHECK:      %[[SRC:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @negate::@negate_32768xf32
// CHECK-NEXT: %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-NEXT: %[[PV:.+]] = util.call @__mdc_stage_pinned_site_view(%[[SIZE]], %[[OWNER]]) {mdc.staged} : (index, !hal.device) -> !hal.buffer_view
// CHECK-NEXT: %[[PIN:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %[[PV]] : !hal.buffer_view -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[FILLED:.+]] = stream.async.update on(#hal.device.affinity<@device_a>) %[[SRC]], %[[PIN]][%[[C0]] to %[[SIZE]]] : !stream.resource<*>{%[[SIZE]]} -> %[[PIN]] as !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[RES:[^ ,]+]], %[[TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[FILLED]]
// CHECK-NEXT: %[[READY:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP]] => (!hal.fence)
// CHECK-NEXT: %[[VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES]] : tensor<?xi8>{%[[SIZE]]}
// CHECK-NEXT: %[[DST:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-NEXT: %[[STAGED:.+]] = util.call @__mdc_stage_from_pinned(%[[VIEW]], %[[READY]], %[[DST]]) {mdc.staged} : (!hal.buffer_view, !hal.fence, !hal.device) -> !hal.buffer_view
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_b>) %[[STAGED]]
// The way back: a second site's pinned buffer, filled on device_b's queue,
// copied out by a copy dispatch on device_a, which the host waits for
// before the buffer can be reused.
// CHECK:      %[[PV2:.+]] = util.call @__mdc_stage_pinned_site_1_view(%[[SIZE]],
// CHECK:      %[[BACK_VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>)
// device_a imports the view the copy returns: IREE may not read the
// buffer before the call that fills it.
// CHECK:      %[[FILLED2:.+]] = util.call @__mdc_stage_copy_into_pinned(%[[BACK_VIEW]], %{{.+}}, %[[PV2]], %{{.+}}) {mdc.staged} : (!hal.buffer_view, !hal.fence, !hal.buffer_view, !hal.device) -> !hal.buffer_view
// CHECK-NEXT: %[[BACK:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[FILLED2]] : !hal.buffer_view -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<external>{%[[SIZE]]}
// CHECK:      %[[BACK_ANY:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[BACK]]
// CHECK-NEXT: %[[COPIED:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @[[COPY_A:__mdc_copy_on_device_a]]::@__mdc_copy_on_device_a_bytes[%[[SIZE]]](%[[BACK_ANY]], %[[SIZE]], %{{.+}}, %[[SIZE]]) {mdc.staged} : (tensor<?xi8>{%[[SIZE]]} in !stream.resource<*>{%[[SIZE]]}, index, index, index) -> tensor<?xi8>{%[[SIZE]]} in !stream.resource<*>{%[[SIZE]]}
// CHECK-NEXT: %[[OUT:[^ ,]+]], %[[OUT_TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[COPIED]]
// CHECK-NEXT: %[[DONE:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[OUT_TP]] => (!hal.fence)
// CHECK-NEXT: util.call @__mdc_stage_await(%[[DONE]]) {mdc.staged} : (!hal.fence) -> ()
// CHECK-NEXT: util.return %[[OUT]] : !stream.resource<*>
// A splat is no dispatch, so copy dispatches write it into pinned memory,
// and it goes on to the GPU in pieces (by default one per 16 MiB, at most 16;
// staging_template.PIECE_BYTES): a loop whose every iteration copies its
// piece into a fresh import of the view that the previous iteration's helper
// returned (so the host issues each piece after that helper, and no piece's
// queue work waits on an earlier piece's fence); each helper waits for its
// piece on the host and starts its GPU copy, and a last helper waits for all
// of them. Before the loop the host waits for the value itself: IREE 3.13
// does not make a copy inside the loop wait for a value captured from
// outside it. Each crossing site has its own pinned buffer (IREE may run two
// producers together), kept by its own helper.
// CHECK-LABEL: util.func public @two_sites(
// CHECK:      %[[X:.+]] = stream.tensor.splat
// CHECK:      %[[PV:.+]] = util.call @[[SITE1:__mdc_stage_pinned_site_[0-9]+_view]](
// CHECK:      %[[DST:.+]]:2 = util.call @__mdc_stage_pieces_destination(
// CHECK-NEXT: %[[PER:.+]] = arith.constant 16777216 : index
// CHECK-NEXT: %[[WANTED:.+]] = arith.ceildivui %[[XSIZE:.+]], %[[PER]] : index
// CHECK-NEXT: %[[MAX:.+]] = arith.constant 16 : index
// CHECK-NEXT: %[[ATMOST:.+]] = arith.minui %[[WANTED]], %[[MAX]] : index
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT: %[[COUNT:.+]] = arith.maxui %[[ATMOST]], %[[ONE]] : index
// CHECK:      %[[SETTLED:.+]], %[[STP:.+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[X]]
// CHECK-NEXT: %[[SF:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[STP]]
// CHECK-NEXT: util.call @__mdc_stage_await(%[[SF]])
// CHECK-NEXT: %[[DONES:.+]] = util.list.create %[[COUNT]]
// CHECK:      %[[LAST:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[COUNT]] step %{{.+}} iter_args(%[[V:.+]] = %[[PV]]) -> (!hal.buffer_view) {
// CHECK:        %[[PIN:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %[[V]] :
// CHECK-NEXT:   %[[C:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @[[COPY_A]]::@__mdc_copy_on_device_a_bytes[%[[LEN:.+]]](%[[SETTLED]], %[[XSIZE]], %[[OFF:.+]], %[[LEN]])
// CHECK-NEXT:   %[[U:.+]] = stream.async.update on(#hal.device.affinity<@device_a>) %[[C]], %[[PIN]][%[[OFF]] to
// CHECK-NEXT:   %{{.+}}, %[[T:.+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[U]]
// CHECK-NEXT:   %[[F:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[T]]
// CHECK-NEXT:   %[[S:.+]]:2 = util.call @__mdc_stage_piece_onto(%[[V]], %[[F]], %[[OFF]], %[[LEN]], %[[DST]]#0, %[[DST]]#1, %{{.+}})
// CHECK-NEXT:   util.list.set %[[DONES]][%[[I]]], %[[S]]#1
// CHECK-NEXT:   scf.yield %[[S]]#0 : !hal.buffer_view
// CHECK-NEXT: }
// The list is read through a barrier that also takes the loop's result:
// IREE's scheduling keeps the call after the loop.
// CHECK-NEXT: %[[FILLED:.+]]:2 = util.optimization_barrier %[[DONES]], %[[LAST]] : !util.list<?>, !hal.buffer_view
// CHECK-NEXT: %[[ARRIVED:.+]] = util.call @__mdc_stage_pieces_arrived(%[[DST]]#0, %[[FILLED]]#0)
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_b>) %[[ARRIVED]]
// CHECK-NOT:  util.call @[[SITE1]](
// CHECK:      util.call @__mdc_stage_pinned_site_{{[0-9]+}}_view(
// CHECK:      util.call @__mdc_stage_pieces_arrived(
// CHECK-LABEL: util.func public @also_used_here(
// CHECK:      %[[P:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @negate::@negate_32768xf32
// CHECK:      %[[PSETTLED:.+]], %{{.+}} = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[P]]
// CHECK:      %[[PCOPY:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @[[COPY_A]]::@__mdc_copy_on_device_a_bytes[%{{.+}}](%[[PSETTLED]],
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
// TWO-NOT:   arith.constant 16777216
// TWO:       %[[COUNT:.+]] = arith.constant 2 : index
// TWO:       scf.for %{{.+}} = %{{.+}} to %[[COUNT]] step
// TWO:       util.call @__mdc_stage_pieces_arrived(
// TWO:       util.func private @__mdc_stage_piece_onto(%[[PIN:.+]]: !hal.buffer_view, %[[READY:.+]]: !hal.fence, %[[OFF:.+]]: index, %[[LEN:.+]]: index, %[[DV:.+]]: !hal.buffer_view, %[[DREADY:.+]]: !hal.fence, %[[DEV:.+]]: !hal.device)
// TWO-DAG:     %[[STAGING:.+]] = hal.buffer_view.buffer<%[[PIN]] : !hal.buffer_view>
// TWO-DAG:     %[[DSTBUF:.+]] = hal.buffer_view.buffer<%[[DV]] : !hal.buffer_view>
// TWO:         %[[STATUS:.+]] = hal.fence.await until([%[[READY]]])
// TWO-NEXT:    %[[OK:.+]] = arith.constant 0 : i32
// TWO-NEXT:    %[[FAILED:.+]] = arith.cmpi ne, %[[STATUS]], %[[OK]] : i32
// TWO-NEXT:    scf.if %[[FAILED]] {
// TWO-NEXT:      util.status.check_ok %[[STATUS]]
// TWO-NEXT:    }
// TWO-NEXT:    %[[DONE:.+]] = hal.fence.create device(%[[DEV]] : !hal.device)
// TWO-NEXT:    hal.device.queue.copy<%[[DEV]] : !hal.device> affinity(%{{.+}}) wait(%[[DREADY]]) signal(%[[DONE]]) source(%[[STAGING]] : !hal.buffer)[%[[OFF]]] target(%[[DSTBUF]] : !hal.buffer)[%[[OFF]]] length(%[[LEN]])
// TWO-NOT:     hal.device.queue
// TWO:         %[[AGAIN:.+]] = hal.buffer_view.create buffer(%[[STAGING]] : !hal.buffer)
// TWO-NEXT:    util.return %[[AGAIN]], %[[DONE]]
// TWO:       util.func private @__mdc_stage_pieces_arrived(%[[DV:.+]]: !hal.buffer_view, %[[DONES:.+]]: !util.list<?>)
// TWO:         %[[N:.+]] = util.list.size %[[DONES]]
// TWO-NEXT:    scf.for %[[J:.+]] = %{{.+}} to %[[N]] step
// TWO-NEXT:      %[[D:.+]] = util.list.get %[[DONES]][%[[J]]] : !util.list<?> -> !hal.fence
// TWO-NEXT:      hal.fence.await until([%[[D]]])

// FOUR-LABEL: util.func public @two_sites(
// FOUR-NOT:   arith.constant 16777216
// FOUR:       %[[COUNT:.+]] = arith.constant 4 : index
// FOUR-NEXT:  %[[ALIGN:.+]] = arith.constant 64 : index
// FOUR-NEXT:  %[[EVEN:.+]] = arith.ceildivui %{{.+}}, %[[COUNT]] : index
// FOUR-NEXT:  %[[UNITS:.+]] = arith.ceildivui %[[EVEN]], %[[ALIGN]] : index
// FOUR-NEXT:  %[[CHUNK:.+]] = arith.muli %[[UNITS]], %[[ALIGN]] : index
// FOUR:       scf.for %[[I:.+]] = %{{.+}} to %[[COUNT]] step
// FOUR-NEXT:    %[[START:.+]] = arith.muli %[[CHUNK]], %[[I]] : index
