// Fixed (residence.py, Residence.transfer_target): found by the random
// program generator in CI (test/e2e/progen.py, seed 796059576 index 142;
// `progen.py minimize`, then by hand to this). One argument, reshaped, is
// returned on device_a and on device_b under the async-external execution
// model. IREE moves the argument with no target and then moves that move's
// result twice, to device_a and to device_b, neither labelled with a
// source: finding where the first move goes asked its consumers, each of
// which asked where the first move's value is, which asked the consumers
// again. mdc-compile stopped with "maximum recursion depth exceeded" for
// every lowering. A move's consumers that ask where its value is while its
// target is being found now get where it is before the move.
// Stock IREE (all-local) prints the two results checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --iree-execution-model=async-external -o %t/emplace.vmfb
// RUN: mdc-run --module=%t/emplace.vmfb --device=local-task --device=local-sync "--input=7x4xf32=[1 2 3 4][5 6 7 8][9 10 11 12][13 14 15 16][17 18 19 20][21 22 23 24][25 26 27 28]" | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --iree-execution-model=async-external -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync "--input=7x4xf32=[1 2 3 4][5 6 7 8][9 10 11 12][13 14 15 16][17 18 19 20][21 22 23 24][25 26 27 28]" | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --iree-execution-model=async-external -o %t/cuda.vmfb
// CHECK: result[0]: hal.buffer_view
// CHECK-NEXT: 28xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28
// CHECK: result[1]: hal.buffer_view
// CHECK-NEXT: 28xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28

func.func public @one_value_returned_on_both(
    %x: tensor<7x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<28xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<28xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %here = tensor.collapse_shape %x [[0, 1]] : tensor<7x4xf32> into tensor<28xf32>
  %there = tensor.collapse_shape %x [[0, 1]] : tensor<7x4xf32> into tensor<28xf32>
  return %here, %there : tensor<28xf32>, tensor<28xf32>
}
