// Like argument_returned_on_other_device.mlir, through a call: a private
// function returns its argument, and the public one returns the call's
// result on another device. IREE inlines the call first, and the crossing
// folded away as before; returned-argument-moves follows the call, and the
// value is staged b -> a. (Without that the verifier rejected the module:
// "result 0 of @through_a_call, declared on device_a (local), is argument 0,
// declared on device_b (cuda), returned as it is".)
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 4xf32=1 2 3 4

// IR-LABEL: util.func public @through_a_call(
// IR: stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0
// IR: util.call @__mdc_stage
// IR: stream.tensor.export on(#hal.device.affinity<@device_a>) {{.*}} : tensor<4xf32> in
func.func private @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func public @through_a_call(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %r = call @identity(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
