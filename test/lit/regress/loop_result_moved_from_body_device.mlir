// Fixed (residence.py, Residence.transfer_source): found by the random
// program generator in CI (test/e2e/progen.py, seed 796058199 index 146;
// `progen.py minimize`, then by hand to this). A loop starts from a value
// moved to device_b and works on device_a; after the loop the result and
// the moved value are combined on device_a. transfer-insertion keeps the
// loop-carried value where its initial value is (device_b: the back edge is
// staged there), so the loop's result lives on device_b; IREE labels the
// move of the result `from(device_a)`, the loop body's device, and mdc took
// the label, left the move unstaged, and its verifier rejected what IREE
// then made of it:
//   error: 'hal.allocator.select' makes one allocation serve device_a
//   (local) and device_b (local), which do not share memory
// for both --staging lowerings, every execution model, and local+cuda. A
// loop's result now takes its source from the loop's initial value.
// Stock IREE (all-local) prints the result checked below: x - (x + 3 bias).
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/emplace.vmfb
// RUN: mdc-run --module=%t/emplace.vmfb --device=local-task --device=local-sync --input=2xf32=1,2 --input=2xf32=0.5,0.25 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --staging=copy --iree-execution-model=async-external -o %t/copy.vmfb
// RUN: mdc-run --module=%t/copy.vmfb --device=local-task --device=local-sync --input=2xf32=1,2 --input=2xf32=0.5,0.25 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 2xf32=-1.5 -0.75

func.func public @loop_result_used_beside_its_init(
    %x: tensor<2xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %bias: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<2xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %there = flow.tensor.transfer %x : tensor<2xf32> to #hal.device.promise<@device_b>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %there) -> (tensor<2xf32>) {
    %here = flow.tensor.transfer %acc : tensor<2xf32> to #hal.device.promise<@device_a>
    %e = tensor.empty() : tensor<2xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%here, %bias : tensor<2xf32>, tensor<?xf32>) outs(%e : tensor<2xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<2xf32>
    scf.yield %next : tensor<2xf32>
  }
  %d = arith.subf %there, %r : tensor<2xf32>
  return %d : tensor<2xf32>
}
