// Fixed with argument_returned_on_other_device.mlir (returned-argument-moves):
// an argument declared on device_b, returned on device_a through ops that
// only change its shape. A reshape there and back (%same) folds to the
// argument itself in IREE, which then folds the import and the export away
// as for an argument returned as it is (%y was returned unstaged); a
// tensor.collapse_shape (%flat) keeps IREE's move, which was staged before
// too. Each is staged b -> a once.
// Stock IREE (all-local) prints the results checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --iree-execution-model=async-external --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --no-result-storage-twins --report=%t/emplace.json -o %t/emplace.vmfb
// RUN: FileCheck %s --check-prefix=REPORT < %t/emplace.json
// RUN: mdc-run --module=%t/emplace.vmfb --device=local-task --device=local-sync "--input=2x3xf32=[1 2 3][4 5 6]" "--input=2x3xf32=[7 8 9][10 11 12]" | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --iree-execution-model=async-external -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync "--input=2x3xf32=[1 2 3][4 5 6]" "--input=2x3xf32=[7 8 9][10 11 12]" | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 6xf32=1 2 3 4 5 6
// CHECK: 2x3xf32=[7 8 9][10 11 12]

// IR-LABEL: util.func public @reshaped(
// IR-COUNT-2: util.call @__mdc_stage_local_to_local_via_device_b(
// IR-NOT: util.call @__mdc_stage_local_to_local
// IR: util.return
// REPORT-COUNT-2: "from": "device_b",
// REPORT-NOT: "from":
func.func public @reshaped(%x: tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
                           %y: tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<6xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %flat_y = tensor.collapse_shape %y [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %same = tensor.expand_shape %flat_y [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  return %flat, %same : tensor<6xf32>, tensor<2x3xf32>
}
