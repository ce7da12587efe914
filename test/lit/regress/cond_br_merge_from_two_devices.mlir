// Fixed (residence.py, Residence._branch_arg_home; transfer_insertion.py
// stages branch operands). A cf.cond_br whose merge block argument gets a
// value made on device_b on one edge and one made on device_a on the
// other. mdc gave a block argument of a cf block no home, so neither edge
// was a crossing, and IREE allocated the merged value for both devices;
// the verifier rejected it:
//   error: 'hal.allocator.select' makes one allocation serve device_a
//   (local) and device_b (local), which do not share memory
// A branch-reached block argument now lives where its incoming values do
// (the default device when they disagree and one is there), and a value
// passed from another device is staged at its branch.
// Stock IREE (all-local) prints the results checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/emplace.vmfb
// RUN: iree-run-module --module=%t/emplace.vmfb --device=local-task --device=local-sync --input=6xi32=1,2,3,4,5,-6 --input=1 | FileCheck %s --check-prefix=TAKEN
// RUN: iree-run-module --module=%t/emplace.vmfb --device=local-task --device=local-sync --input=6xi32=1,2,3,4,5,-6 --input=0 | FileCheck %s --check-prefix=NOT-TAKEN
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy -o %t/copy.vmfb
// RUN: iree-run-module --module=%t/copy.vmfb --device=local-task --device=local-sync --input=6xi32=1,2,3,4,5,-6 --input=1 | FileCheck %s --check-prefix=TAKEN
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] -o %t/vulkan.vmfb
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// TAKEN: 6xi32=1 8 27 64 125 -216
// NOT-TAKEN: 6xi32=-1 -4 -9 -16 -25 -36

// The device_b edge stages its value back to device_a before branching;
// the merge block's dispatch runs on device_a.
// IR-LABEL: util.func public @cond_br_merge(
// IR: cf.cond_br %{{.*}}, ^bb1, ^bb2
// IR: ^bb1:
// IR: stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @cond_br_merge_dispatch_0
// IR: util.call @__mdc_stage_
// IR: stream.tensor.import on(#hal.device.affinity<@device_a>)
// IR: cf.br ^bb3(
// IR: ^bb2:
// IR-NOT: __mdc_stage
// IR: cf.br ^bb3(
// IR: ^bb3(
// IR: stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @cond_br_merge_dispatch_2
// IR: util.return

func.func public @cond_br_merge(
    %x: tensor<6xi32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %offload: i1
  ) -> (tensor<6xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  cf.cond_br %offload, ^bb1, ^bb2
^bb1:
  %on_b = flow.tensor.transfer %x : tensor<6xi32> to #hal.device.promise<@device_b>
  %squared_b = arith.muli %on_b, %on_b : tensor<6xi32>
  cf.br ^bb3(%squared_b : tensor<6xi32>)
^bb2:
  %zero = arith.subi %x, %x : tensor<6xi32>
  %neg = arith.subi %zero, %x : tensor<6xi32>
  cf.br ^bb3(%neg : tensor<6xi32>)
^bb3(%v: tensor<6xi32>):
  %r = arith.muli %v, %x : tensor<6xi32>
  return %r : tensor<6xi32>
}
