// Fixed (declared_devices_default.py). The program declares its device
// globals without a value and takes their targets from --device. mdc gave
// the module a default device, after which IREE no longer defines such
// globals from --iree-hal-target-device, and mdc-compile failed on a staged
// CPU triple and on local + cuda + local with
//   error: 'flow.tensor.transfer' op references a promised device that was
//   not declared: #hal.device.promise<@device_b>
// (iree_default_before_undefined_device_globals.test shows stock IREE doing
// the same). mdc now leaves the default of such a module to IREE.
// Stock IREE (all-local) prints the result checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=a:b=staged --link=a:c=staged --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=a:b=staged --link=a:c=staged -o %t/abc.vmfb
// RUN: iree-run-module --module=%t/abc.vmfb --device=local-task --device=local-sync --device=local-task --input=2x3xf32=-2 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=b:a=staged --link=c:b=staged -o %t/bac.vmfb
// RUN: iree-run-module --module=%t/bac.vmfb --device=local-task --device=local-sync --device=local-task --input=2x3xf32=-2 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --device=c=local[1] --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// CHECK: 2x3xf32=[2 2 2][2 2 2]

// IR: util.global private @device_b
// IR-LABEL: util.func public @fanout(
// IR: util.return

util.global private @device_a : !hal.device
util.global private @device_b : !hal.device
util.global private @device_c : !hal.device
func.func public @fanout(
    %x: tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<2x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %xb = flow.tensor.transfer %x : tensor<2x3xf32> to #hal.device.promise<@device_b>
  %xc = flow.tensor.transfer %x : tensor<2x3xf32> to #hal.device.promise<@device_c>
  %b = arith.mulf %xb, %xb : tensor<2x3xf32>
  %c = math.absf %xc : tensor<2x3xf32>
  %bb = flow.tensor.transfer %b : tensor<2x3xf32> to #hal.device.promise<@device_a>
  %cb = flow.tensor.transfer %c : tensor<2x3xf32> to #hal.device.promise<@device_a>
  %r = arith.subf %bb, %cb : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
