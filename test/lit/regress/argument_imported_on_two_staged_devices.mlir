// Fixed (place_unplaced_ops.py, _import_arguments_where_declared). %x is
// declared without an affinity, so the caller gives it on the default
// device (device_a); device_b and device_c each read it. IREE imports it on
// device_b and on device_c, one buffer for both, though device_b and
// device_c are a staged pair (each shares memory with device_a). The
// corpus program op_affinity_three (test/e2e/programs/external) has this
// shape; mdc's verifier rejected it:
//   error: 'hal.device.queue.execute.indirect' on dev_y (local) uses a
//   device-local buffer allocated by dev_z (local), memory dev_y cannot access
//   note: the buffer is an argument imported on dev_z
// mdc now imports it on device_a and moves it to each reader.
// Stock IREE (all-local) prints the result checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=b:c=staged --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=b:c=staged -o %t/bc.vmfb
// RUN: iree-run-module --module=%t/bc.vmfb --device=local-task --device=local-sync --device=local-task --input=4xf32=1,2,3,4 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=c:b=staged -o %t/cb.vmfb
// RUN: iree-run-module --module=%t/cb.vmfb --device=local-task --device=local-sync --device=local-task --input=4xf32=1,2,3,4 | FileCheck %s
// CHECK: 4xf32=-1 0 3 8

// IR-LABEL: util.func public @f(
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@device_c>) %arg0
// IR: stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@device_c>) %arg0
// IR: util.return

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %sb = arith.mulf %b, %b : tensor<4xf32>
  %c = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_c>
  %sc = arith.addf %c, %c : tensor<4xf32>
  %rb = flow.tensor.transfer %sb : tensor<4xf32> to #hal.device.promise<@device_a>
  %rc = flow.tensor.transfer %sc : tensor<4xf32> to #hal.device.promise<@device_a>
  %r = arith.subf %rb, %rc : tensor<4xf32>
  return %r : tensor<4xf32>
}
