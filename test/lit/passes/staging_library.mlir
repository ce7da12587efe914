// The staging library (passes/lowering/staging_library.mlir) on its own: it parses
// and verifies, and holds every helper staging_template.py clones from it.
// RUN: iree-opt %S/../../../passes/lowering/staging_library.mlir | FileCheck %s
// RUN: iree-opt %S/../../../passes/lowering/staging_library.mlir | FileCheck %s --check-prefix=CHUNKS

// CHECK-DAG: util.func private @await(
// CHECK-DAG: util.func private @await_view(
// CHECK-DAG: util.func private @pinned_view(
// CHECK-DAG: util.global private mutable @pinned_cache : !hal.buffer
// CHECK-DAG: util.func private @stage_gpu_to_gpu(
// CHECK-DAG: util.func private @stage_gpu_to_local(
// CHECK-DAG: util.func private @stage_local_to_gpu(
// CHECK-DAG: util.func private @stage_local_to_local(
// CHECK-DAG: util.global private mutable @site_cache : !hal.buffer
// CHECK-DAG: util.func private @site_view(
// CHECK-DAG: util.global private mutable @released_site_cache : !hal.buffer
// CHECK-DAG: util.global private mutable @released_site_reads : !hal.fence
// CHECK-DAG: util.func private @released_site_view(
// CHECK-DAG: util.func private @record_read(
// CHECK-DAG: util.global private mutable @in_place_site_cache : !hal.buffer
// CHECK-DAG: util.global private mutable @in_place_site_reads : !hal.fence
// CHECK-DAG: util.func private @in_place_site_view(
// CHECK-DAG: util.func private @record_read_if_in_place(
// CHECK-DAG: util.func private @from_pinned(
// CHECK-DAG: util.func private @from_pinned_or_in_place(
// CHECK-DAG: util.func private @copy_into_pinned(
// CHECK-DAG: util.func private @copy_into_output(
// CHECK-DAG: util.func private @pieces_destination(
// CHECK-DAG: util.func private @piece_onto(
// CHECK-DAG: util.func private @pieces_arrived(
// CHECK-DAG: util.func private @pieces_destination_or_in_place(
// CHECK-DAG: util.func private @piece_onto_or_in_place(
// CHECK-DAG: util.func private @pieces_arrived_or_in_place(

// A local queue's copy is cut into CHUNKS_ON_LOCAL_QUEUE (8) chunks of at
// least MIN_CHUNK_BYTES (1 MiB); a GPU queue's is one copy.
// CHUNKS-LABEL: util.func private @stage_local_to_gpu(
// CHUNKS: arith.constant 8 : index
// CHUNKS-NEXT: arith.constant 1048576 : index
// CHUNKS: scf.for
// CHUNKS: hal.device.queue.copy<%arg2 : !hal.device>
// CHUNKS-LABEL: util.func private @stage_local_to_local(
