// Regression, fixed (was: pass bug, host_fences.py): found by the random program generator
// (test/e2e/progen.py). With --iree-execution-model=async-external, a
// function that returns a value computed on device_a but declared on
// device_b, *and* returns an argument unchanged, fails late:
//   -:11:3: error: 'vm.cond_fail' op status is 0; expected to not be OK
//   note: IREE failed from phase hal to the vmfb; ...
// (--verbose: the op is `vm.cond_fail %0, %0 {message = "mdc: waiting on the
// program's work failed"}` with a constant OK status.) The same for
// --device=b=cuda[0]; async-internal compiles; swapping the two result
// affinities compiles. The location "-:11:3" points at no file either.
// Stock IREE (all-local) prints 3xf32=2 4 6 and 3xf32=1 2 3.
// Expected: compiles and runs, printing the same.

// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --iree-execution-model=async-external -o %t/ext.vmfb
// RUN: mdc-run --module=%t/ext.vmfb --device=local-task --device=local-sync --input=3xf32=1,2,3 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] --iree-execution-model=async-external -o %t/cuda.vmfb
// CHECK: 3xf32=2 4 6
// CHECK: 3xf32=1 2 3

func.func public @computed_on_a_returned_on_b(
    %x: tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = arith.addf %x, %x : tensor<3xf32>
  return %y, %x : tensor<3xf32>, tensor<3xf32>
}
