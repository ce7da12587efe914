// The negative of argument_returned_on_other_device.mlir: where the two
// devices share memory (two local devices, no --link), returning the
// caller's buffer as the other device's result is right, and mdc leaves
// IREE's output as it is: no move, no staging, the vmfb byte for byte
// stock iree-compile's.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --compile-to=mdc -o - | FileCheck %s --check-prefixes=IR,FOLDED
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --iree-execution-model=async-external --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --iree-llvmcpu-target-cpu=generic --no-manifest -o %t/mdc.vmfb
// RUN: iree-compile %s --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t/stock.vmfb
// RUN: cmp %t/mdc.vmfb %t/stock.vmfb
// RUN: mdc-run --module=%t/mdc.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 --input=4xf32=5,6,7,8 | FileCheck %s
// CHECK: 4xf32=1 2 3 4
// CHECK: 4xf32=5 6 7 8

// IR-NOT: __mdc_stage
// IR-NOT: stream.async.transfer
// IR-LABEL: util.func public @shared(
// FOLDED-NEXT: util.return %arg0, %arg1 :
// IR-NOT: __mdc_stage
// IR-NOT: stream.async.transfer
func.func public @shared(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
                         %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  return %x, %y : tensor<4xf32>, tensor<4xf32>
}
