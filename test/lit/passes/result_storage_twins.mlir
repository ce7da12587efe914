// result-storage-twins: @F$into takes @F's arguments, then one output
// argument (iree.abi.output) per tensor result declared on a CPU device, and
// calls @F. Results on the GPU, scalars, and results the function already
// writes into an output argument of its own get none.
// RUN: mdc-opt %s --split-input-file --pass=result-storage-twins --device=a=local[0] --device=b=cuda[0] | FileCheck %s
// Two CPUs that share memory: no twin anywhere.
// RUN: mdc-opt %s --split-input-file --pass=result-storage-twins --device=a=local[0] --device=b=local[1] | FileCheck %s --check-prefix=SHARED
// RUN: (mdc-opt %S/Inputs/result_storage_twin_taken.mlir --pass=result-storage-twins --device=a=local[0] --device=b=cuda[0] 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=TAKEN
// Through the pipeline: the twin's crossing back is the GPU's queue copy
// straight into the caller's storage, which the manifest pins in the GPU's
// memory; the function itself keeps its own staging.
// RUN: mdc-compile %S/Inputs/result_storage_twin_one.mlir --device=a=local[0] --device=b=local[1] --link=a:b=staged --no-host-entry-points --compile-to=mdc -o - | FileCheck %s --check-prefix=STAGED
// RUN: mdc-compile %S/Inputs/result_storage_twin_one.mlir --device=a=local[0] --device=b=cuda[0] --report=%t.md -o %t.vmfb
// RUN: FileCheck %s --check-prefix=REPORT < %t.md
// RUN: %python -c "import json,sys; from mdc.runtime_shim.module import load; from iree import runtime as rt; i=rt.VmInstance(); m=rt.VmModule.mmap(i, sys.argv[1]); d=json.loads(m.lookup_function('back').reflection['mdc.manifest']); print(d['result_storage'], d['pinned_arguments'])" %t.vmfb | FileCheck %s --check-prefix=MANIFEST
// RUN: mdc-compile %S/Inputs/result_storage_twin_one.mlir --device=a=local[0] --device=b=cuda[0] --no-result-storage-twins --report=%t.off.md -o %t.off.vmfb
// RUN: FileCheck %s --check-prefix=OFF < %t.off.md

// CHECK: module attributes {mdc.result_storage_twins = ["mixed$into"]}
// CHECK-LABEL: util.func public @mixed(
// CHECK-LABEL: util.func public @mixed$into(
// CHECK-SAME:    %[[X:.+]]: tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, %[[N:.+]]: index,
// CHECK-SAME:    %{{.+}}: tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>, iree.abi.output = 0 : index},
// CHECK-SAME:    %{{.+}}: tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_a>, iree.abi.output = 2 : index})
// CHECK-SAME:    -> (tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}, index)
// CHECK:         %[[R:.+]]:4 = util.call @mixed(%[[X]], %[[N]])
// CHECK:         util.return %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
// CHECK-NOT:     $into
// SHARED-NOT:    $into
// STAGED-LABEL:  util.func public @back(
// STAGED:        util.call @__mdc_stage_pinned_site_view(
// STAGED-NOT:    copy_into_output
// STAGED-LABEL:  util.func public @back$into(
// STAGED-SAME:   %{{[a-z0-9]+}}: !hal.buffer_view, %[[OUT:[a-z0-9]+]]: !hal.buffer_view)
// STAGED-NOT:    __mdc_stage_pinned_site
// STAGED:        util.call @__mdc_stage_copy_into_output(%{{.+}}, %{{.+}}, %[[OUT]], %device_b)
// STAGED-NOT:    __mdc_stage_pinned_site
// STAGED:        util.return
util.func public @mixed(%x: tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, %n: index)
    -> (tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}, index) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x4xf32>
  %y = flow.tensor.transfer %x : tensor<?x4xf32>{%d} to #hal.device.promise<@device_a>
  %z = arith.constant dense<1.0> : tensor<4xf32>
  %i = arith.constant dense<7> : tensor<4xi32>
  util.return %y, %z, %i, %n : tensor<?x4xf32>, tensor<4xf32>, tensor<4xi32>, index
}

// -----
// Every result on the GPU: nothing to store.
// CHECK-LABEL: util.func public @on_gpu(
// CHECK-NOT:   on_gpu$into
util.func public @on_gpu(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  util.return %x : tensor<4xf32>
}

// -----
// Nothing declared on the GPU: nothing comes back from it that the
// declaration shows.
// CHECK-LABEL: util.func public @on_cpu(
// CHECK-NOT:   on_cpu$into
util.func public @on_cpu(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  util.return %x : tensor<4xf32>
}

// -----
// The result is already written into an output argument of the function's
// own: no twin.
// CHECK-LABEL: util.func public @own_output(
// CHECK-NOT:   own_output$into
util.func public @own_output(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %out: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>, iree.abi.output = 0 : index})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_a>
  util.return %y : tensor<4xf32>
}

// -----
// A name MLIR writes quoted: the twin's is quoted too.
// CHECK:       module attributes {mdc.result_storage_twins = ["grow-1$into"]}
// CHECK-LABEL: util.func public @"grow-1"(
// CHECK-LABEL: util.func public @"grow-1$into"(
// CHECK:         util.call @"grow-1"(
util.func public @"grow-1"(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_a>
  util.return %y : tensor<4xf32>
}

// REPORT: | {{[0-9]+}} | {{.*}} | device_b | device_a | `tensor<4xf32>` | 16 | staged, straight into the caller's pinned output |
// MANIFEST: {'back': {'function': 'back$into', 'results': [0]}} {'back$into': {'1': 'device_b'}}
// OFF-NOT: back$into
// OFF-NOT: pinned output
// TAKEN: result_storage_twin_taken.mlir:2:1: error: the program defines '@back$into', the name of the result-storage twin mdc adds for '@back'
// TAKEN: note: rename the function, or compile with --no-result-storage-twins
// TAKEN: rc=1
