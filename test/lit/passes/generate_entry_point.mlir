// generate-entry-point: a module whose @prefill and @decode follow
// mdc.generate's convention (docs/mdc-generate.md) gets @generate(ids,
// length, count) -> (ids, logits): @prefill, then count - 1 steps of
// @decode, each new id the argmax of the logits (a strict ogt: the first on
// a tie), fed back at position length + i - 1. It calls each function in
// IREE's coarse-fences ABI with a fence the result's import waits on (an
// iree-turbine export's $async; a plain tensor function through a
// never-inlined wrapper @F$generate), and each loop-carried ids or logits
// tensor is a buffer of its own (export, barrier, import) at the loop's
// start and back edge: the stock IREE bugs of
// test/lit/regress/iree_loop_fence_await_before_call.test,
// iree_global_store_sunk_past_loop.test and
// iree_loop_two_dynamic_results.test.
// RUN: mdc-opt %s --split-input-file --pass=generate-entry-point | FileCheck %s
// Modules without such a pair come out as they go in.
// RUN: mdc-opt %S/Inputs/generate_entry_point_untouched.mlir --split-input-file -o %t.before.mlir
// RUN: mdc-opt %S/Inputs/generate_entry_point_untouched.mlir --split-input-file --pass=generate-entry-point -o %t.after.mlir
// RUN: diff %t.before.mlir %t.after.mlir
// A pair that names no device is on the default device (gpu sorts first):
// @generate names it where it exports the arguments and imports the
// results, and so do the wrappers' imports and exports (unnamed, the import
// of a result made on the GPU would be read wherever its first reader runs,
// the host in @generate's host twin).
// RUN: mdc-opt %S/Inputs/generate_entry_point_default.mlir --pass=generate-entry-point --device=gpu=vulkan[0] --device=host=local[0] | FileCheck %s --check-prefix=DEFAULT
// DEFAULT-LABEL: util.func private @prefill$generate(
// DEFAULT:         hal.tensor.import on(#hal.device.promise<@gpu>) wait(
// DEFAULT:         hal.tensor.import on(#hal.device.promise<@gpu>) wait(
// DEFAULT:         hal.tensor.export on(#hal.device.promise<@gpu>)
// DEFAULT-LABEL: util.func public @generate(
// DEFAULT:         hal.tensor.export on(#hal.device.promise<@gpu>) %{{.+}} : tensor<1x4xi64>
// DEFAULT:         hal.tensor.export on(#hal.device.promise<@gpu>) %{{.+}} : tensor<1xi64>
// DEFAULT:         util.call @prefill$generate(
// DEFAULT-NEXT:    hal.tensor.import on(#hal.device.promise<@gpu>) wait(
// DEFAULT:         util.call @decode$generate(
// DEFAULT-NEXT:    hal.tensor.import on(#hal.device.promise<@gpu>) wait(
// A program that defines @generate itself: an error naming it and the way out.
// RUN: (mdc-opt %S/Inputs/generate_entry_point_taken.mlir --pass=generate-entry-point 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=TAKEN
// TAKEN: generate_entry_point_taken.mlir:11:1: error: the program defines '@generate', a name of the generation loop mdc adds for '@prefill' and '@decode' (docs/mdc-generate.md)
// TAKEN-NEXT: note: rename the function, or compile with --no-generate-entry-point
// TAKEN: rc=1

// Plain tensor functions, i64 ids and f32 logits: each gets a wrapper in
// the coarse-fences ABI that @generate calls.
// CHECK-LABEL: util.func private @prefill$generate(
// CHECK-SAME:    %[[A:.+]]: !hal.buffer_view, %[[B:.+]]: !hal.buffer_view, %[[W:.+]]: !hal.fence, %[[S:.+]]: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never}
// CHECK-NEXT:    %[[X:.+]] = hal.tensor.import wait(%[[W]]) => %[[A]] : !hal.buffer_view -> tensor<1x4xi64>
// CHECK-NEXT:    %[[Y:.+]] = hal.tensor.import wait(%[[W]]) => %[[B]] : !hal.buffer_view -> tensor<1xi64>
// CHECK-NEXT:    %[[R:.+]] = util.call @prefill(%[[X]], %[[Y]])
// CHECK-NEXT:    %[[D:.+]] = hal.tensor.barrier join(%[[R]] : tensor<1x8xf32>) => %[[S]] : !hal.fence
// CHECK-NEXT:    %[[V:.+]] = hal.tensor.export %[[D]] : tensor<1x8xf32> -> !hal.buffer_view
// CHECK-NEXT:    util.return %[[V]]
// CHECK-LABEL: util.func private @decode$generate(
// CHECK:         util.call @decode(
// CHECK-LABEL: util.func public @generate(
// CHECK-SAME:    %[[IDS:.+]]: tensor<1x4xi64>, %[[LEN:.+]]: tensor<1xi64>, %[[COUNT:.+]]: i64) -> (tensor<?xi64>, tensor<?x8xf32>)
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1 : i64
// CHECK-DAG:     %[[LOWEST:.+]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[ENOUGH:.+]] = arith.cmpi sge, %[[COUNT]], %[[ONE]] : i64
// CHECK:         %[[STATUS:.+]] = arith.select %[[ENOUGH]]
// CHECK:         util.status.check_ok %[[STATUS]], "@generate: count must be at least 1"
// CHECK:         %[[N:.+]] = arith.index_cast %[[COUNT]] : i64 to index
// CHECK:         %[[L:.+]] = tensor.extract %[[LEN]]
// CHECK:         %[[IDS_BV:.+]] = hal.tensor.export %[[IDS]] : tensor<1x4xi64> -> !hal.buffer_view
// CHECK:         %[[LEN_BV:.+]] = hal.tensor.export %[[LEN]] : tensor<1xi64> -> !hal.buffer_view
// CHECK:         %[[F0:.+]] = hal.fence.create
// CHECK:         %[[P_BV:.+]] = util.call @prefill$generate(%[[IDS_BV]], %[[LEN_BV]], %{{.+}}, %[[F0]])
// CHECK-NEXT:    %[[L0:.+]] = hal.tensor.import wait(%[[F0]]) => %[[P_BV]] : !hal.buffer_view -> tensor<1x8xf32>
// CHECK:         %[[BEST0:.+]] = linalg.fill ins(%[[LOWEST]] : f32)
// CHECK:         %[[T0:.+]]:2 = linalg.generic {{.+}} ins(%[[L0]] : tensor<1x8xf32>) outs(%[[BEST0]], %{{.+}} : tensor<1xf32>, tensor<1xi64>)
// CHECK:           arith.cmpf ogt
// CHECK:         %[[IDS_E:.+]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK:         %[[ROWS_E:.+]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK:         %[[IDS_S:.+]] = tensor.insert_slice %[[T0]]#1 into %[[IDS_E]][0] [1] [1]
// CHECK:         %[[ROWS_S:.+]] = tensor.insert_slice %[[L0]] into %[[ROWS_E]][0, 0] [1, 8] [1, 1]
// CHECK:         %[[IDS_X:.+]] = hal.tensor.export %[[IDS_S]] : tensor<?xi64>{%[[N]]} -> !hal.buffer_view
// CHECK-NEXT:    %[[IDS_K:.+]] = util.optimization_barrier %[[IDS_X]] : !hal.buffer_view
// CHECK-NEXT:    %[[IDS_0:.+]] = hal.tensor.import %[[IDS_K]] : !hal.buffer_view -> tensor<?xi64>{%[[N]]}
// CHECK:         %[[ROWS_0:.+]] = hal.tensor.import %{{.+}} : !hal.buffer_view -> tensor<?x8xf32>{%[[N]]}
// CHECK:         %[[LOOP:.+]]:3 = scf.for %[[I:.+]] = %[[C1]] to %[[N]] step %[[C1]] iter_args(%[[TOK:.+]] = %[[T0]]#1, %[[OUT:.+]] = %[[IDS_0]], %[[ROWS:.+]] = %[[ROWS_0]])
// CHECK:           %[[BACK:.+]] = arith.subi %[[I]], %[[C1]] : index
// CHECK:           %[[BACK_I:.+]] = arith.index_cast %[[BACK]] : index to i64
// CHECK:           %[[P:.+]] = arith.addi %[[L]], %[[BACK_I]] : i64
// CHECK:           %[[POS:.+]] = tensor.from_elements %[[P]] : tensor<1xi64>
// CHECK:           %[[TOKEN:.+]] = tensor.expand_shape %[[TOK]] {{\[\[}}0, 1]] output_shape [1, 1] : tensor<1xi64> into tensor<1x1xi64>
// CHECK:           %[[TOKEN_BV:.+]] = hal.tensor.export %[[TOKEN]]
// CHECK:           %[[POS_BV:.+]] = hal.tensor.export %[[POS]]
// CHECK:           %[[F:.+]] = hal.fence.create
// CHECK:           %[[D_BV:.+]] = util.call @decode$generate(%[[TOKEN_BV]], %[[POS_BV]], %{{.+}}, %[[F]])
// CHECK-NEXT:      %[[LI:.+]] = hal.tensor.import wait(%[[F]]) => %[[D_BV]] : !hal.buffer_view -> tensor<1x8xf32>
// CHECK:           %[[T:.+]]:2 = linalg.generic {{.+}} ins(%[[LI]] : tensor<1x8xf32>)
// CHECK:           %[[OUT_N:.+]] = tensor.insert_slice %[[T]]#1 into %[[OUT]][%[[I]]] [1] [1]
// CHECK:           %[[ROWS_N:.+]] = tensor.insert_slice %[[LI]] into %[[ROWS]][%[[I]], 0] [1, 8] [1, 1]
// CHECK:           hal.tensor.export %[[OUT_N]] : tensor<?xi64>{%[[N]]}
// CHECK:           %[[OUT_1:.+]] = hal.tensor.import %{{.+}} : !hal.buffer_view -> tensor<?xi64>{%[[N]]}
// CHECK:           hal.tensor.export %[[ROWS_N]] : tensor<?x8xf32>{%[[N]]}
// CHECK:           %[[ROWS_1:.+]] = hal.tensor.import %{{.+}} : !hal.buffer_view -> tensor<?x8xf32>{%[[N]]}
// CHECK:           scf.yield %[[T]]#1, %[[OUT_1]], %[[ROWS_1]]
// CHECK:         util.return %[[LOOP]]#1, %[[LOOP]]#2 : tensor<?xi64>, tensor<?x8xf32>
util.func public @prefill(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}
util.func public @decode(%token: tensor<1x1xi64>, %position: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}

// -----

// An iree-turbine export's shape (IREE's torch input conversion: @F a sync
// wrapper of the coarse-fences @F$async), placed as --place writes it:
// @generate calls the $async functions, exporting each argument and
// importing the result on the devices their imports and export name. i32
// ids and f16 logits: the argmax starts from f16's -inf.
// CHECK-LABEL: util.func public @generate(
// CHECK-SAME:    %[[IDS:.+]]: tensor<1x16xi32>, %[[LEN:.+]]: tensor<1xi32>, %{{.+}}: i64) -> (tensor<?xi32>, tensor<?x32xf16>)
// CHECK-NOT:     $generate
// CHECK-DAG:     arith.constant 0xFC00 : f16
// CHECK:         hal.tensor.export on(#hal.device.promise<@cpu>) %[[IDS]] : tensor<1x16xi32> -> !hal.buffer_view
// CHECK:         hal.tensor.export on(#hal.device.promise<@gpu>) %[[LEN]] : tensor<1xi32> -> !hal.buffer_view
// CHECK:         %[[F0:.+]] = hal.fence.create
// CHECK:         %[[P_BV:.+]] = util.call @prefill$async(%{{.+}}, %{{.+}}, %{{.+}}, %[[F0]])
// CHECK-NEXT:    hal.tensor.import on(#hal.device.promise<@cpu>) wait(%[[F0]]) => %[[P_BV]] : !hal.buffer_view -> tensor<1x32xf16>
// CHECK:         arith.index_cast %{{.+}} : index to i32
// CHECK:         scf.for
// CHECK:           tensor.from_elements %{{.+}} : tensor<1xi32>
// CHECK:           util.call @decode$async(
// CHECK:         util.return %{{.+}}#1, %{{.+}}#2 : tensor<?xi32>, tensor<?x32xf16>
util.func public @prefill$async(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.fence, %arg3: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never, iree.abi.model = "coarse-fences", iree.abi.stub} {
  %0 = hal.tensor.import on(#hal.device.promise<@cpu>) wait(%arg2) => %arg0 : !hal.buffer_view -> tensor<1x16xi32>
  %1 = hal.tensor.import on(#hal.device.promise<@gpu>) wait(%arg2) => %arg1 : !hal.buffer_view -> tensor<1xi32>
  %z = arith.constant dense<0.0> : tensor<1x32xf16>
  %2 = hal.tensor.barrier join(%z : tensor<1x32xf16>) => %arg3 : !hal.fence
  %3 = hal.tensor.export on(#hal.device.promise<@cpu>) %2 : tensor<1x32xf16> -> !hal.buffer_view
  util.return %3 : !hal.buffer_view
}
util.func public @prefill(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
  %0 = util.null : !hal.fence
  %c-1_i32 = arith.constant -1 : i32
  %c0 = arith.constant 0 : index
  %device_0 = hal.devices.get %c0 : !hal.device
  %fence = hal.fence.create device(%device_0 : !hal.device) flags("None") : !hal.fence
  %1 = util.call @prefill$async(%arg0, %arg1, %0, %fence) : (!hal.buffer_view, !hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
  %status = hal.fence.await until([%fence]) timeout_millis(%c-1_i32) flags("None") : i32
  util.return %1 : !hal.buffer_view
}
util.func public @decode$async(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.fence, %arg3: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never, iree.abi.model = "coarse-fences", iree.abi.stub} {
  %0 = hal.tensor.import wait(%arg2) => %arg0 : !hal.buffer_view -> tensor<1x1xi32>
  %1 = hal.tensor.import wait(%arg2) => %arg1 : !hal.buffer_view -> tensor<1xi32>
  %z = arith.constant dense<0.0> : tensor<1x32xf16>
  %2 = hal.tensor.barrier join(%z : tensor<1x32xf16>) => %arg3 : !hal.fence
  %3 = hal.tensor.export %2 : tensor<1x32xf16> -> !hal.buffer_view
  util.return %3 : !hal.buffer_view
}
util.func public @decode(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
  %0 = util.null : !hal.fence
  %c-1_i32 = arith.constant -1 : i32
  %c0 = arith.constant 0 : index
  %device_0 = hal.devices.get %c0 : !hal.device
  %fence = hal.fence.create device(%device_0 : !hal.device) flags("None") : !hal.fence
  %1 = util.call @decode$async(%arg0, %arg1, %0, %fence) : (!hal.buffer_view, !hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
  %status = hal.fence.await until([%fence]) timeout_millis(%c-1_i32) flags("None") : i32
  util.return %1 : !hal.buffer_view
}
