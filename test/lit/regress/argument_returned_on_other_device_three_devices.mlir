// Fixed with argument_returned_on_other_device.mlir (returned-argument-moves),
// three devices: device_b is staged with device_a and with device_c, and
// device_a and device_c share memory. Each argument is returned on another
// device: %y (b) on device_a and %z (c) on device_b are staged, once each;
// %x (a) on device_c is left to IREE (the caller's buffer, as stock IREE
// returns it).
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=a:b=staged --link=c:b=staged --no-result-storage-twins --report=%t/emplace.json -o %t/emplace.vmfb
// RUN: FileCheck %s --check-prefix=REPORT < %t/emplace.json
// RUN: mdc-run --module=%t/emplace.vmfb --device=local-task --device=local-sync --device=local-task --input=2xf32=1,2 --input=2xf32=3,4 --input=2xf32=5,6 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=a:b=staged --link=c:b=staged --staging=copy --iree-execution-model=async-external -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync --device=local-task --input=2xf32=1,2 --input=2xf32=3,4 --input=2xf32=5,6 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --device=c=local[1] -o %t/cuda.vmfb
// CHECK: 2xf32=3 4
// CHECK: 2xf32=1 2
// CHECK: 2xf32=5 6

// REPORT: "summary": [
// REPORT: "pair": "device_b -> device_a",
// REPORT-NEXT: "count": 1,
// REPORT: "pair": "device_c -> device_b",
// REPORT-NEXT: "count": 1,
// REPORT-NOT: "pair"
func.func public @rotate(%x: tensor<2xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                         %y: tensor<2xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
                         %z: tensor<2xf32> {iree.abi.affinity = #hal.device.promise<@device_c>})
    -> (tensor<2xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<2xf32> {iree.abi.affinity = #hal.device.promise<@device_c>},
        tensor<2xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  return %y, %x, %z : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
