// Regression, found by the random programs in CI (seed 796615646 index 102:
// python test/e2e/progen.py check --seed 796615646 --index 102) and fixed in
// the thirtieth session. One constant, transposed (IREE folds both
// transposes into one hoisted constant), returned on device_b and, reshaped,
// on device_a; the staged CPU pair's copy to device_b goes in three pieces.
// The loop that copies the pieces fills a list with their fences, and the
// call after the loop waits on that list. The two are tied only by side
// effects, and iree-stream-schedule-execution re-sorts a block by its SSA
// uses when it forms execution regions: it put the call before the loop,
// which would read the list empty and device_b's result unwritten. mdc's
// verifier refused the module (its rule list-order). Not every compile:
// the same input compiled fine in most runs here, so the order IREE picks
// between ops with no SSA path depends on more than the input. The call now
// reads the list through a util.optimization_barrier that also takes the
// loop's result, an SSA path IREE keeps; ORDER checks that it is there.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=emplace --staging-pieces=3 --compile-to=stream -o - | FileCheck %s --check-prefix=ORDER
// ORDER-LABEL: util.func public @constant_twice_transposed(
// ORDER:       util.call @__mdc_stage_piece_onto(
// ORDER:       util.list.set %[[LIST:[0-9]+]]
// ORDER:       cf.br ^bb1(
// ORDER:       %[[ORDERED:[0-9]+]]:2 = util.optimization_barrier %[[LIST]], %{{[0-9]+}} : !util.list<?>, !hal.buffer_view
// ORDER-NEXT:  util.call @__mdc_stage_pieces_arrived(%{{.*}}, %[[ORDERED]]#0)
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=emplace --staging-pieces=3 -o %t/pair.vmfb
// RUN: iree-run-module --module=%t/pair.vmfb --device=local-task --device=local-task --function=constant_twice_transposed | FileCheck %s
// CHECK: 4x2xf32=[1 -1][2 -2][3 -3][4 -4]
// CHECK: 8xf32=1 -1 2 -2 3 -3 4 -4

func.func public @constant_twice_transposed()
    -> (tensor<4x2xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %k = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, -3.0, -4.0]]> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %t = linalg.transpose ins(%k : tensor<2x4xf32>) outs(%e : tensor<4x2xf32>) permutation = [1, 0]
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
  %e2 = tensor.empty() : tensor<4x2xf32>
  %t2 = linalg.transpose ins(%k : tensor<2x4xf32>) outs(%e2 : tensor<4x2xf32>) permutation = [1, 0]
  return %t2, %c : tensor<4x2xf32>, tensor<8xf32>
}
