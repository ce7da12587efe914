// Regression, fixed (was: pass bug, transfer_insertion.py): found by the random program
// generator (test/e2e/progen.py, while minimising). An scf.for whose carried
// value starts as a constant and visits device_b in the body. Stock IREE
// compiles it (all-local: 4xf32=-1 -2 -3 -4 for 2 trips); mdc-compile fails,
// in both execution models, with and without const-eval, and for
// --device=b=cuda[0] too:
//   loop_constant_init.mlir:..: error: 'scf.for' op along control flow edge
//   from parent to Operation scf.for: successor operand type #0
//   '!stream.resource<constant>' should match successor input type #0
//   '!stream.resource<external>'
// (The value imported on device_a after staging is an external resource; the
// loop's other incoming value is a constant. See also
// loop_argument_used_on_other_device.mlir.)
// Expected: compiles and prints 4xf32=-1 -2 -3 -4.

// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: iree-run-module --module=%t/staged.vmfb --device=local-task --device=local-sync --input=2 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 4xf32=-1 -2 -3 -4

func.func public @loop_from_constant(%n: index)
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant dense<[-1.0, 2.0, -3.0, 4.0]> : tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %k) -> (tensor<4xf32>) {
    %ab = flow.tensor.transfer %acc : tensor<4xf32> to #hal.device.promise<@device_b>
    %s = math.absf %ab : tensor<4xf32>
    %back = flow.tensor.transfer %s : tensor<4xf32> to #hal.device.promise<@device_a>
    scf.yield %back : tensor<4xf32>
  }
  %y = arith.negf %r : tensor<4xf32>
  return %y : tensor<4xf32>
}
