// Fixed (transfer_insertion.py, _import_arguments_where_declared). %y is
// declared without an affinity, so the caller gives it on the default
// device (device_a), and it is moved to device_b. IREE gives an argument
// without an affinity the devices of its consumers: it imports %y twice,
// once on device_a and once on device_b, and folds the move into the
// second import (a clone on device_b). mdc saw no crossing, and its
// verifier rejected what IREE then made of it:
//   error: 'hal.device.queue.execute.indirect' on device_a (local) uses a
//   device-local buffer allocated by device_b (local) ...
//   note: the buffer is an argument imported on device_b
// mdc now imports every argument on its declared device and moves it from
// there to where IREE imported it, a crossing like any other.
// Stock IREE (all-local) prints the two results checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/emplace.vmfb
// RUN: iree-run-module --module=%t/emplace.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 --input=4xf32=1,1,1,1 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy -o %t/copy.vmfb
// RUN: iree-run-module --module=%t/copy.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 --input=4xf32=1,1,1,1 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] -o %t/vulkan.vmfb
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 4xf32=2 5 10 17
// CHECK: 4xf32=3 6 11 18

// %x is imported where declared; %y only on device_a, then staged to device_b.
// IR-LABEL: util.func public @f(
// IR: stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@device_b>) %arg1
// IR: stream.tensor.import on(#hal.device.affinity<@device_a>) %arg1
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@device_b>) %arg1
// IR: util.call @__mdc_stage_{{.*}}(%{{.*}}, %device_b)
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@device_b>) %arg1
// IR: util.return

func.func @f(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, %y: tensor<4xf32>) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<4xf32>) {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  %1 = flow.tensor.transfer %y : tensor<4xf32> to #hal.device.promise<@device_b>
  %2 = arith.addf %0, %1 : tensor<4xf32>
  %3 = flow.tensor.transfer %2 : tensor<4xf32> to #hal.device.promise<@device_a>
  %4 = arith.addf %3, %y : tensor<4xf32>
  return %2, %4 : tensor<4xf32>, tensor<4xf32>
}
