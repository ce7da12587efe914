// refuse-recursive-calls: a cycle in the call graph (a function calling
// itself, directly or through others) is refused with the cycle and the
// location of the call that closes it; a call graph without one is left as
// it is (calls of one function from several places, a diamond, calls of
// functions the module only declares). IREE 3.13 never finishes compiling
// a recursive program; mdc-compile refuses it in a fraction of a second.
// RUN: (mdc-opt %s --pass=refuse-recursive-calls --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: (mdc-compile %S/Inputs/recursive_program.mlir --device=a=local[0] --device=b=local[1] -o %t/o.vmfb 2>&1; echo "rc=$?"; test ! -e %t/o.vmfb && echo no-output) | %no-traceback | FileCheck %s --check-prefix=COMPILE
// COMPILE: recursive_program.mlir:3:8: error: @forever calls itself: IREE 3.13 never finishes compiling a recursive program
// COMPILE: rc=1
// COMPILE-NEXT: no-output

// CHECK: recursive_calls.mlir:[[# @LINE + 3]]:8: error: @forever calls itself: IREE 3.13 never finishes compiling a recursive program
// CHECK-NEXT: note: stock iree-compile hangs on it too; write the recursion as a loop
func.func private @forever(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @forever(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func public @direct(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @forever(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Through two functions, ending at run time: still a cycle.
// The call that closes the cycle is @odd's.
// CHECK: recursive_calls.mlir:[[# @LINE + 16]]:8: error: @even calls itself through @even -> @odd -> @even: IREE 3.13 never finishes compiling a recursive program
func.func public @even(%x: tensor<4xf32>, %n: i32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %done = arith.cmpi sle, %n, %c0 : i32
  %r = scf.if %done -> tensor<4xf32> {
    scf.yield %x : tensor<4xf32>
  } else {
    %m = arith.subi %n, %c1 : i32
    %y = func.call @odd(%x, %m) : (tensor<4xf32>, i32) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func private @odd(%x: tensor<4xf32>, %n: i32) -> tensor<4xf32> {
  %y = arith.negf %x : tensor<4xf32>
  %z = func.call @even(%y, %n) : (tensor<4xf32>, i32) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// No cycle: a diamond, one function called twice, an external function.
// CHECK-NOT: error
// CHECK-LABEL: func.func public @diamond(
// CHECK-NEXT: call @left(
// CHECK-NEXT: call @right(
// CHECK-NEXT: call @leaf(
// CHECK-NEXT: call @external(
func.func private @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @left(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @right(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func public @diamond(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = call @left(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = call @right(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = call @leaf(%b) : (tensor<4xf32>) -> tensor<4xf32>
  %d = call @external(%c) : (tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
// CHECK: rc=1
