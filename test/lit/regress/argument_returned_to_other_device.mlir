// Fixed with argument_returned_on_other_device.mlir (returned-argument-moves),
// the other direction: arguments on device_a returned as results declared on
// device_b. %x is declared on device_a, %y on no device (the caller gives it
// on the default device, device_a). IREE folded each import and export into
// the argument itself, so device_b's results were device_a's buffers; each
// is now staged a -> b.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --iree-execution-model=async-external --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --report=%t/emplace.json -o %t/emplace.vmfb
// RUN: FileCheck %s --check-prefix=REPORT < %t/emplace.json
// RUN: mdc-run --module=%t/emplace.vmfb --device=local-task --device=local-sync --input=3xi32=1,2,3 --input=2xi8=-1,1 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --iree-execution-model=async-external -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync --input=3xi32=1,2,3 --input=2xi8=-1,1 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// RUN: mdc-compile %s --device=a=local[0] --device=b=hip[0] --iree-execution-model=async-external -o %t/hip.vmfb
// CHECK: 3xi32=1 2 3
// CHECK: 2xi8=-1 1

// IR-LABEL: util.func public @to_b(
// IR: stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0
// IR: stream.tensor.import on(#hal.device.affinity<@device_a>) %arg1
// IR-COUNT-2: util.call @__mdc_stage_local_to_local_via_device_b(
// IR-NOT: util.call @__mdc_stage_local_to_local
// IR: util.return
// REPORT-COUNT-2: "from": "device_a",
// REPORT-NOT: "from":
func.func public @to_b(%x: tensor<3xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %y: tensor<2xi8>)
    -> (tensor<3xi32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<2xi8> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  return %x, %y : tensor<3xi32>, tensor<2xi8>
}
