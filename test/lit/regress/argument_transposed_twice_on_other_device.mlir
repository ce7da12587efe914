// Fixed with argument_returned_on_other_device.mlir (returned-argument-moves):
// found by the random program generator (test/e2e/progen.py, seed 796118410
// index 2, once the verifier rejected such results), minimised by hand. An
// argument on device_a transposed twice is returned on device_b. IREE folds
// the two transposes to the argument itself, and then the import and the
// export to the argument: device_b's result was device_a's buffer, which
// the verifier now rejects ("result 0 of @transposed_twice, declared on
// device_b (cuda), is argument 0, declared on device_a (local), returned as
// it is"). The pass moves every result made of one other device's
// arguments, whatever IREE folds of it, so it is staged a -> b.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/emplace.vmfb
// RUN: mdc-run --module=%t/emplace.vmfb --device=local-task --device=local-sync "--input=2x3xi8=[1 2 3][4 5 6]" | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --iree-execution-model=async-external -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync "--input=2x3xi8=[1 2 3][4 5 6]" | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 2x3xi8=[1 2 3][4 5 6]

// IR-LABEL: util.func public @transposed_twice(
// IR: stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0
// IR: util.call @__mdc_stage_local_to_local_via_device_b(
// IR: stream.tensor.export on(#hal.device.affinity<@device_b>) {{.*}} : tensor<2x3xi8> in
func.func public @transposed_twice(%x: tensor<2x3xi8> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<2x3xi8> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %e0 = tensor.empty() : tensor<3x2xi8>
  %t0 = linalg.transpose ins(%x : tensor<2x3xi8>) outs(%e0 : tensor<3x2xi8>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<2x3xi8>
  %t1 = linalg.transpose ins(%t0 : tensor<3x2xi8>) outs(%e1 : tensor<2x3xi8>) permutation = [1, 0]
  return %t1 : tensor<2x3xi8>
}
