// Fixed (residence.py, Residence.home of scf.while results). The before
// region of an scf.while moves its value to device_b and computes there,
// and scf.condition forwards the device_b value. mdc took the loop's
// result to live where its initial value does (device_a), though it is
// what scf.condition forwards; the result's use on device_a was no
// crossing, and IREE allocated the value for both devices:
//   error: 'hal.allocator.select' makes one allocation serve device_a
//   (local) and device_b (local), which do not share memory
// A while loop's results now live where the forwarded values do, like the
// do region's arguments, and their use on device_a is staged.
// Stock IREE (all-local) prints the results checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/emplace.vmfb
// RUN: iree-run-module --module=%t/emplace.vmfb --device=local-task --device=local-sync --input=3xf32=100,2,3 --input=5 | FileCheck %s --check-prefix=LOOP
// RUN: iree-run-module --module=%t/emplace.vmfb --device=local-task --device=local-sync --input=3xf32=4,2,3 --input=5 | FileCheck %s --check-prefix=ONCE
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy -o %t/copy.vmfb
// RUN: iree-run-module --module=%t/copy.vmfb --device=local-task --device=local-sync --input=3xf32=100,2,3 --input=5 | FileCheck %s --check-prefix=LOOP
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] -o %t/vulkan.vmfb
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// LOOP: 3xf32=8.125 2 2.0625
// ONCE: 3xf32=4 2 3

// After the loop, its device_b result is staged to device_a before the cast
// on device_a that exports it.
// IR-LABEL: util.func public @halve_before(
// IR: scf.while
// IR: scf.condition
// IR: scf.yield
// IR: }
// IR: stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @halve_before_dispatch_2
// IR: util.call @__mdc_stage_
// IR: stream.tensor.import on(#hal.device.affinity<@device_a>)
// IR: stream.tensor.export on(#hal.device.affinity<@device_a>)
// IR: util.return

func.func public @halve_before(
    %x: tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %bound: f32
  ) -> (tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %r = scf.while (%v = %x) : (tensor<3xf32>) -> tensor<3xf32> {
    %on_b = flow.tensor.transfer %v : tensor<3xf32> to #hal.device.promise<@device_b>
    %half = arith.constant dense<0.5> : tensor<3xf32>
    %h = arith.mulf %on_b, %half : tensor<3xf32>
    %first = tensor.extract %h[%c0] : tensor<3xf32>
    %go = arith.cmpf ogt, %first, %bound : f32
    scf.condition(%go) %h : tensor<3xf32>
  } do {
  ^bb0(%w: tensor<3xf32>):
    %one = arith.constant dense<1.0> : tensor<3xf32>
    %next = arith.addf %w, %one : tensor<3xf32>
    scf.yield %next : tensor<3xf32>
  }
  %twice = arith.addf %r, %r : tensor<3xf32>
  return %twice : tensor<3xf32>
}
