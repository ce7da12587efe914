// transfer-insertion (--staging=emplace, the default) on small crossings: a
// value whose size is known at compile time and at most
// SMALL_CROSSING_BYTES (64 KiB). On IREE 3.13's cuda every GPU submission
// that waits on a fence not reached yet, and every host wait, costs tens of
// microseconds, which is most of a small call's time.
//
// CPU -> GPU: the CPU writes the value into its site's pinned buffer and the
// host waits for that (no queue may wait on another driver's fence); then
// the GPU's dispatches read it there, in their own submission: no queue
// copy, allocation or host wait of its own. Nothing waits for those reads
// but the site's next write: its view function waits on the host for the
// fence the site recorded, that of the readers' results (or of the update
// a result goes into, into which IREE emplaces it), taken by barriers at
// the end of the block (the recording call, right after a reader, would
// cut IREE's partition there: a call does). A use that is not a dispatch
// reading the value on the
// GPU (here: it is returned) gets a copy dispatch on the GPU first, and the
// fence is the copy's.
//
// GPU -> CPU: the GPU writes the value into a pinned site within the
// submission that produces it (a stream.async.update, into which IREE
// emplaces the producing kernel); the site's view is asked for at the start
// of the block (a call cuts IREE's partition, and one at the crossing would
// put the producer after it).
// RUN: mdc-opt %S/Inputs/local_cuda_small.mlir --pass=transfer-insertion | FileCheck %s
// RUN: mdc-opt %S/Inputs/local_cuda_small.mlir --pass=transfer-insertion --staging=emplace | FileCheck %s
// --staging=copy keeps the copying lowering for every size.
// RUN: mdc-opt %S/Inputs/local_cuda_small.mlir --pass=transfer-insertion --staging=copy | FileCheck %s --check-prefix=COPY

// CHECK-LABEL: util.func public @there_and_back(
// The way back's site, first: its size, computed at the block's start.
// CHECK-NEXT: %[[BSIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32>
// CHECK-NEXT: %[[OWNER0:.+]] = util.global.load immutable @device_b
// CHECK-NEXT: %[[PV_BACK:.+]] = util.call @[[SITE_BACK:__mdc_stage_pinned_site_1_view]](%[[BSIZE]], %[[OWNER0]])
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32>
// CHECK:      %[[ON_A:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @scale::@scale_4xf32
// CHECK:      %[[PV:.+]] = util.call @[[SITE:__mdc_stage_pinned_site_view]](%[[SIZE]],
// CHECK-NEXT: %[[PIN:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %[[PV]]
// CHECK:      %[[FILLED:.+]] = stream.async.update on(#hal.device.affinity<@device_a>) %[[ON_A]], %[[PIN]][
// CHECK-NEXT: %[[RES:[^ ,]+]], %[[TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[FILLED]]
// CHECK-NEXT: %[[READY:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP]]
// CHECK-NEXT: %[[VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES]]
// CHECK-NEXT: %[[WAITED:.+]] = util.call @__mdc_stage_await_view(%[[READY]], %[[VIEW]])
// CHECK-NEXT: %[[ON_B:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[WAITED]]
// CHECK-NEXT: %[[ON_B_ANY:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[ON_B]]
// The consumer reads the pinned buffer itself.
// CHECK-NEXT: %[[SCALED:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%[[ON_B_ANY]])
// CHECK-NEXT: %[[PIN_BACK:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) consume %[[PV_BACK]]
// CHECK:      %[[WRITTEN:.+]] = stream.async.update on(#hal.device.affinity<@device_b>) %[[SCALED]], %[[PIN_BACK]][
// CHECK-NEXT: %[[BRES:[^ ,]+]], %[[BTP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[WRITTEN]]
// CHECK-NEXT: %[[BREADY:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[BTP]]
// CHECK-NEXT: %[[BVIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[BRES]]
// CHECK-NEXT: %[[BWAITED:.+]] = util.call @__mdc_stage_await_view(%[[BREADY]], %[[BVIEW]])
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_a>) %[[BWAITED]]
// CHECK:      stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @__mdc_copy_on_device_a::@__mdc_copy_on_device_a_bytes
// CHECK:      util.call @__mdc_stage_await(
// At the end of the block, the site records its reader's fence: that of the
// update its result goes into (a barrier on the result itself would be a
// second use, and IREE would no longer emplace the kernel there).
// CHECK-NEXT: %{{.+}}, %[[CTP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[WRITTEN]]
// CHECK-NEXT: %[[READ:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[CTP]]
// CHECK-NEXT: util.call @__mdc_stage_pinned_site_record_read(%[[READ]])
// CHECK-NEXT: util.return
// No queue copy helper for either crossing, no copy dispatch on the GPU.
// CHECK-NOT:  @__mdc_stage_from_pinned
// CHECK-NOT:  @__mdc_stage_copy_into_pinned
// CHECK-NOT:  @__mdc_copy_on_device_b
// Returned on the GPU: a copy there first; the fence is the copy's.
// CHECK-LABEL: util.func public @returned(
// CHECK:      %[[R_WAITED:.+]] = util.call @__mdc_stage_await_view(
// CHECK-NEXT: %[[R_IMP:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[R_WAITED]]
// CHECK-NEXT: %[[R_ANY:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[R_IMP]]
// CHECK:      %[[R_COPY:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @__mdc_copy_on_device_b::@__mdc_copy_on_device_b_bytes[%{{.+}}](%[[R_ANY]],
// CHECK-NEXT: %{{.+}}, %[[R_TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[R_COPY]]
// CHECK-NEXT: %[[R_READ:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[R_TP]]
// CHECK-NEXT: util.call @__mdc_stage_pinned_site_2_record_read(%[[R_READ]])
// CHECK-NEXT: util.return %[[R_COPY]]
// Two readers: the site's fence joins theirs.
// CHECK-LABEL: util.func public @two_readers(
// CHECK:      %[[T_ANY:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[R1:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%[[T_ANY]])
// CHECK-NEXT: %[[R2:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%[[T_ANY]])
// CHECK-NEXT: %{{.+}}, %[[T1:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[R1]]
// CHECK-NEXT: %{{.+}}, %[[T2:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[R2]]
// CHECK-NEXT: %[[BOTH:.+]] = stream.timepoint.join max(%[[T1]], %[[T2]])
// CHECK-NEXT: %[[T_READ:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[BOTH]]
// CHECK-NEXT: util.call @__mdc_stage_pinned_site_3_record_read(%[[T_READ]])
// CHECK-NEXT: util.return %[[R1]], %[[R2]]
// A size known at run time only: the value is written as the emplace
// lowering writes it (here in pieces) and the helpers choose at run time,
// given the size limit. Returned, not read by a dispatch on the GPU, it
// could not be read in place: the limit is 0, nothing is recorded.
// CHECK-LABEL: util.func public @dynamic(
// CHECK:      %[[NEVER:.+]] = arith.constant 0 : index
// CHECK:      util.call @__mdc_stage_pieces_destination_or_in_place(%{{.+}}, %{{.+}}, %{{.+}}, %[[NEVER]])
// CHECK-NOT:  record_read
// CHECK:      util.return
// Read by a dispatch on the GPU: up to 64 KiB read in place. The site
// records its reader's fence with the flag the helper that chose returned.
// CHECK-LABEL: util.func public @dynamic_read(
// CHECK:      %[[D_PV:.+]] = util.call @__mdc_stage_pinned_site_5_view(
// CHECK-NEXT: %[[LIMIT:.+]] = arith.constant 65536 : index
// CHECK:      %[[DST:.+]]:3 = util.call @__mdc_stage_pieces_destination_or_in_place(%{{.+}}, %{{.+}}, %[[D_PV]], %[[LIMIT]])
// CHECK:      scf.for
// CHECK:      util.call @__mdc_stage_piece_onto_or_in_place(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[DST]]#0, %[[DST]]#1, %{{.+}}, %[[DST]]#2)
// CHECK:      %[[ARRIVED:.+]] = util.call @__mdc_stage_pieces_arrived_or_in_place(%[[DST]]#0,
// CHECK-NEXT: %[[D_IMP:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[ARRIVED]]
// CHECK-NEXT: %[[D_ANY:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[D_IMP]]
// CHECK:      %[[D_R:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(%[[D_ANY]])
// CHECK-NEXT: %{{.+}}, %[[D_TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[D_R]]
// CHECK-NEXT: %[[D_READ:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[D_TP]]
// CHECK-NEXT: util.call @__mdc_stage_pinned_site_5_record_read(%[[D_READ]], %[[DST]]#2)
// CHECK-NEXT: util.return %[[D_R]]
// A CPU kernel's result whose one use is the crossing: the kernel writes
// into the pinned buffer, and the helper returns a view of it (small) or
// of the GPU's copy.
// CHECK-LABEL: util.func public @dynamic_made_read(
// CHECK:      %[[M_LIMIT:.+]] = arith.constant 65536 : index
// CHECK:      stream.async.update on(#hal.device.affinity<@device_a>)
// CHECK:      %[[M_VIEW:.+]]:2 = util.call @__mdc_stage_from_pinned_or_in_place(%{{.+}}, %{{.+}}, %{{.+}}, %[[M_LIMIT]])
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_b>) %[[M_VIEW]]#0
// CHECK:      util.call @__mdc_stage_pinned_site_6_record_read(%{{.+}}, %[[M_VIEW]]#1)
// CHECK-NEXT: util.return
// GPU -> CPU with a size known at run time only: the GPU kernel writes its
// result into the site's pinned buffer in its own submission, at any size
// (measured on the H200: faster than a second submission's queue copy up
// to 16 MiB, level at 256 MiB), and the CPU reads the view the helper
// returns once the host waited for the GPU's fence. No queue copy.
// CHECK-LABEL: util.func public @dynamic_back(
// CHECK:      %[[DB_PV:.+]] = util.call @__mdc_stage_pinned_site_7_view(
// CHECK:      %[[DB_ON_B:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @scale::@scale_4xf32(
// CHECK-NEXT: %[[DB_PIN:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) consume %[[DB_PV]]
// CHECK:      stream.async.update on(#hal.device.affinity<@device_b>) %[[DB_ON_B]], %[[DB_PIN]][
// CHECK-NOT:  @__mdc_stage_copy_into_pinned
// CHECK:      %[[DB_WAITED:.+]] = util.call @__mdc_stage_await_view(
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_a>) %[[DB_WAITED]]
// CHECK:      util.return
// Known at compile time and above the limit: the GPU's queue copy into
// pinned memory, after the kernel (a kernel writing host memory over PCIe
// is slower than the DMA there).
// CHECK-LABEL: util.func public @large_back(
// CHECK-NOT:  stream.async.update
// CHECK:      %[[LB_FILLED:.+]] = util.call @__mdc_stage_copy_into_pinned(
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_a>) %[[LB_FILLED]]
// CHECK:      util.return
// The site's view function first waits on the host for the last read
// recorded (none before the first call).
// CHECK:      util.func private @[[SITE]](
// CHECK:      %[[LAST:.+]] = util.global.load @[[READ_GLOBAL:__mdc_stage_pinned_site_read]] : !hal.fence
// CHECK:      util.cmp.eq %[[LAST]], %{{.+}} : !hal.fence
// CHECK:      hal.fence.await until([%[[LAST]]])
// CHECK:      util.global.load @__mdc_stage_pinned_site : !hal.buffer
// CHECK:      util.func private @__mdc_stage_pinned_site_record_read(%[[F:.+]]: !hal.fence)
// CHECK-NEXT: util.global.store %[[F]], @[[READ_GLOBAL]] : !hal.fence
// The helpers' choice: the pinned buffer itself at most the limit, a new
// GPU buffer above it; no copy onto the pinned buffer itself.
// CHECK:      util.func private @__mdc_stage_pieces_destination_or_in_place(%[[LEN:.+]]: index, %{{.+}}: !hal.device, %[[PV:.+]]: !hal.buffer_view, %[[MAX:.+]]: index)
// CHECK:      %[[SMALL:.+]] = arith.cmpi ule, %[[LEN]], %[[MAX]] : index
// CHECK-NEXT: %{{.+}}:2 = scf.if %[[SMALL]] -> (!hal.buffer_view, !hal.fence) {
// CHECK-NEXT:   hal.buffer_view.buffer<%[[PV]] : !hal.buffer_view>
// CHECK:      } else {
// CHECK:        hal.device.queue.alloca
// CHECK:      util.func private @__mdc_stage_piece_onto_or_in_place({{.+}}, %[[ONTO_IN_PLACE:.+]]: i1)
// CHECK:      scf.if %[[ONTO_IN_PLACE]] -> (!hal.fence) {
// CHECK-NEXT:   util.null : !hal.fence
// CHECK:      } else {
// CHECK:        hal.device.queue.copy
// CHECK:      util.func private @__mdc_stage_pieces_arrived_or_in_place(
// CHECK:      util.cmp.eq %{{.+}}, %{{.+}} : !hal.fence
// A dynamic site's recording function keeps the fence only where the value
// was read in place; else null (the GPU read its own copy, which the host
// waited for).
// CHECK:      util.func private @__mdc_stage_pinned_site_5_record_read(%[[F5:.+]]: !hal.fence, %[[IN_PLACE5:.+]]: i1)
// CHECK-NEXT: %[[KEPT5:.+]] = scf.if %[[IN_PLACE5]] -> (!hal.fence) {
// CHECK-NEXT:   scf.yield %[[F5]] : !hal.fence
// CHECK:      util.global.store %[[KEPT5]], @__mdc_stage_pinned_site_5_read : !hal.fence
// CHECK:      util.func private @__mdc_stage_from_pinned_or_in_place(%[[FV:.+]]: !hal.buffer_view, %{{.+}}: !hal.fence, %{{.+}}: !hal.device, %[[FMAX:.+]]: index)
// CHECK:      %[[FSMALL:.+]] = arith.cmpi ule, %{{.+}}, %[[FMAX]] : index
// CHECK-NEXT: scf.if %[[FSMALL]] -> (!hal.buffer_view) {
// CHECK-NOT:    hal.device.queue
// CHECK:      } else {
// CHECK:        hal.device.queue.alloca
// CHECK:        hal.device.queue.copy

// COPY-LABEL: util.func public @there_and_back(
// COPY-NOT:   pinned_site
// COPY:       util.call @__mdc_stage_local_to_gpu_via_device_b(
// COPY:       util.call @__mdc_stage_gpu_to_local_via_device_b(
// COPY-NOT:   record_read
