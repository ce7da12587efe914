// Fixed (transfer_insertion.py, loop_init_isolation.py): found by the
// random program generator (test/e2e/progen.py). Inside an scf.for whose
// carried value visits device_b, the body also reads a function argument that
// lives on device_a (an implicit crossing, shape 3, inside the loop), and
// the loop result is moved to device_b and returned. Stock IREE compiles it
// (all-local: 4xf32=2 4 6 8 for 1,2,3,4 and 3 trips); mdc-compile fails in
// both execution models, and for --device=b=cuda[0] too:
//   loop_argument_used_on_other_device.mlir:..: error: 'scf.for' op along
//   control flow edge from parent to Operation scf.for: successor operand
//   type #0 '!stream.resource<transient>' should match successor input type
//   #0 '!stream.resource<external>'
// Without the read of %x in the body, or with the loop result used by an op
// before it is returned, it compiles.
// Expected: compiles and prints 4xf32=2 4 6 8.

// Tried (2026-11-30, first session): exporting a clone, a same-device
// transfer, a copy behind util.optimization_barrier, a copy into a fresh
// external alloca; none reconciled it. Fixed in the second session, twice
// over (each alone makes it compile and print the right values): unstaged
// transfers now carry their source affinity (transfer-insertion), and
// loop-init-isolation exports and re-imports the loop's initial value, so it
// enters the loop as external like the values the body yields.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 --input=3 | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --iree-execution-model=async-external -o %t/ext.vmfb
// RUN: mdc-compile %s --device=a=local[0] --device=b=cuda[0] -o %t/cuda.vmfb
// CHECK: 4xf32=2 4 6 8

func.func public @loop_reads_arg_on_b(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %n: index
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x2 = arith.negf %x : tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x2) -> (tensor<4xf32>) {
    %ab = flow.tensor.transfer %acc : tensor<4xf32> to #hal.device.promise<@device_b>
    %s = arith.addf %ab, %x : tensor<4xf32>
    %back = flow.tensor.transfer %s : tensor<4xf32> to #hal.device.promise<@device_a>
    scf.yield %back : tensor<4xf32>
  }
  %rb = flow.tensor.transfer %r : tensor<4xf32> to #hal.device.promise<@device_b>
  return %rb : tensor<4xf32>
}
