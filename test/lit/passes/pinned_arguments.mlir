// transfer-insertion with --pinned-arguments: the caller gives each public
// function's argument that goes from the CPU to the GPU in the GPU's pinned
// memory, so the crossing is the GPU's queue copy straight out of the
// argument (__mdc_stage_from_pinned on the argument's own export), with no
// pinned staging site and no CPU copy, under either staging lowering. So is
// an output argument (iree.abi.output) that a value coming back from the
// GPU is written into: the GPU copies it straight there, and the result is
// that storage, not IREE's clone of it. The arguments it applied to are
// recorded on the module for the manifest.
// RUN: mdc-opt %S/Inputs/pinned_arguments.mlir --pass=transfer-insertion --pinned-arguments | FileCheck %s
// RUN: mdc-opt %S/Inputs/pinned_arguments.mlir --pass=transfer-insertion --pinned-arguments --staging=copy | FileCheck %s
// Without the flag, the same argument is staged through a pinned site.
// RUN: mdc-opt %S/Inputs/pinned_arguments.mlir --pass=transfer-insertion | FileCheck %s --check-prefix=STAGED
// With --staging=copy, IREE's update writes the staged value into the
// storage, which is returned without IREE's clone of it.
// RUN: mdc-opt %S/Inputs/pinned_arguments.mlir --pass=transfer-insertion --staging=copy | FileCheck %s --check-prefix=COPY

// CHECK:      module attributes {mdc.pinned_arguments = {argument_to_gpu = {"0" = "device_b"}, into_output = {"1" = "device_b"}, second_argument_async = {"1" = "device_b"}}
// STAGED-NOT: mdc.pinned_arguments

// CHECK-LABEL: util.func public @argument_to_gpu(%arg0: !hal.buffer_view)
// CHECK:      %[[SIZE:.+]] = stream.tensor.sizeof
// CHECK-NEXT: %[[IN:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0
// CHECK-NEXT: %[[ANY:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[IN]]
// CHECK-NEXT: %[[EXT:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[ANY]] : !stream.resource<*>{%[[SIZE]]} -> !stream.resource<external>{%[[SIZE]]}
// CHECK-NEXT: %[[RES:[^ ,]+]], %[[TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[EXT]]
// CHECK-NEXT: %[[READY:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP]] => (!hal.fence)
// CHECK-NEXT: %[[VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES]]
// CHECK-NEXT: %[[DST:.+]] = util.global.load immutable @device_b
// CHECK-NEXT: %[[COPIED:.+]] = util.call @__mdc_stage_from_pinned(%[[VIEW]], %[[READY]], %[[DST]])
// CHECK-NEXT: stream.tensor.import on(#hal.device.affinity<@device_b>) %[[COPIED]]
// CHECK-NOT:  __mdc_stage_pinned_site
// CHECK:      util.return

// STAGED-LABEL: util.func public @argument_to_gpu(
// STAGED:       util.call @__mdc_stage_pinned_site_view(
// STAGED:       util.return

// The copy waits, on the host, for the barrier after the caller's wait fence.
// CHECK-LABEL: util.func public @second_argument_async(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.fence)
// CHECK:      %[[IN2:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg1
// CHECK:      %[[WAITED:.+]] = stream.timepoint.await %{{.+}} => %[[IN2]]
// CHECK:      stream.timepoint.barrier
// CHECK:      util.call @__mdc_stage_from_pinned(
// CHECK-NOT:  __mdc_stage_pinned_site
// CHECK:      util.return

// A value made on the CPU is staged as before (a pinned site, or with
// --staging=copy the copying helper).
// CHECK-LABEL: util.func public @made_on_cpu(
// CHECK-NOT:  @__mdc_stage_from_pinned
// CHECK:      util.call @__mdc_stage_{{pinned_site.*_view|local_to_gpu_via_device_b}}(
// CHECK:      util.return

// So is a private function's argument.
// CHECK-LABEL: util.func private @private_argument(
// CHECK-NOT:  @__mdc_stage_from_pinned
// CHECK:      util.call @__mdc_stage_{{pinned_site.*_view|local_to_gpu_via_device_b}}(
// CHECK:      util.return

// CHECK-LABEL: util.func public @into_output(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view)
// CHECK-NOT:  stream.async.transfer
// CHECK:      %[[SRC_VIEW:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[DEV_B:.+]] = util.global.load immutable @device_b
// The import takes the view the copy returns, so it cannot come first; it
// consumes the storage, as IREE's own import of it did (so IREE elides the
// clone before the result's export).
// CHECK-NEXT: %[[WRITTEN_VIEW:.+]] = util.call @__mdc_stage_copy_into_output(%[[SRC_VIEW]], %{{.+}}, %arg1, %[[DEV_B]])
// CHECK-NEXT: %[[STORAGE:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %[[WRITTEN_VIEW]]
// CHECK-NOT:  stream.async.update
// CHECK:      %[[SLICED:.+]] = stream.async.slice on(#hal.device.affinity<@device_a>) %{{.+}}[%{{.+}} to %{{.+}}]
// CHECK-NEXT: %[[SAME:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[SLICED]] : !stream.resource<external>{{.+}} -> !stream.resource<*>
// CHECK-NOT:  stream.async.clone
// CHECK:      util.return

// CHECK-LABEL: util.func public @into_output_at_offset(
// CHECK-NOT:  @__mdc_stage_copy_into_output
// CHECK:      stream.async.update
// CHECK:      util.return

// The storage is checked before it is written.
// CHECK-LABEL: util.func private @__mdc_stage_copy_into_output(
// CHECK:      hal.buffer.assert<%{{.+}} : !hal.buffer> message("mdc: output storage") {{.*}} minimum_length(%{{.+}}) type(HostVisible) usage(TransferTarget)
// CHECK:      hal.device.queue.copy

// Without the flag the storage is the caller's CPU memory: the GPU copies
// into a pinned site, and the CPU's copy dispatch out of it writes into the
// storage (an update of the storage, which IREE emplaces), not into a new
// buffer; the storage is returned, not IREE's clone of it.
// STAGED-LABEL: util.func public @into_output(
// STAGED-NOT:   @__mdc_stage_copy_into_output
// (This value is small, 4 KiB: the GPU writes it into the pinned site in its
// own submission, a stream.async.update there, and the host waits for it.)
// STAGED:       %[[STORAGE:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %arg1
// STAGED:       %[[PV:.+]] = util.call @__mdc_stage_pinned_site_{{[0-9]+}}_view(
// STAGED-NEXT:  %[[PIN:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) consume %[[PV]]
// STAGED:       stream.async.update on(#hal.device.affinity<@device_b>) %{{.+}}, %[[PIN]][
// STAGED:       util.call @__mdc_stage_await_view(
// STAGED:       %[[COPIED:.+]] = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @__mdc_copy_on_device_a
// STAGED-NEXT:  %[[WRITTEN:.+]] = stream.async.update on(#hal.device.affinity<@device_a>) %[[COPIED]], %[[STORAGE]]
// STAGED-NEXT:  %[[RES:[^ ,]+]], %[[TP:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[WRITTEN]]
// STAGED-NEXT:  %[[DONE:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP]]
// STAGED-NEXT:  util.call @__mdc_stage_await(%[[DONE]])
// STAGED-NEXT:  stream.async.slice on(#hal.device.affinity<@device_a>) %[[RES]]
// STAGED-NOT:   stream.async.clone
// STAGED:       util.return

// COPY-LABEL: util.func public @into_output(
// COPY:       util.call @__mdc_stage_gpu_to_local_via_device_b(
// COPY:       stream.async.update
// COPY:       stream.async.cast
// COPY-NOT:   stream.async.clone
// COPY:       util.return
