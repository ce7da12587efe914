// Corpus program op_affinity_annotated.mlir with its argument on Vulkan:
// a never-inlined function on device_c, called with a clone of the
// argument on device_a (the host). In the host twin the clone folds away
// and the call passed the imported argument (external), where the public
// function passes a copy (transient); IREE's stream pipeline failed with
// "'util.call' op function type mismatch" (stock IREE's limitation:
// iree_never_inlined_mixed_lifetimes.test). Each twin now calls its own
// copies. The shapes here: calls nested through an inlined helper and two
// never-inlined levels (@nested), a never-inlined callee shared by three
// publics (@shared, @fenced and @nested's tree), and a public declared
// coarse-fences (@fenced).
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] --device=c=local[1] -o %t/vulkan.vmfb
// RUN: mdc-compile %s --device=a=local[0] --device=b=vulkan[0] --device=c=local[1] --compile-to=input -o - | FileCheck %s
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=a:b=staged -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --function=nested --device=local-task --device=local-task --device=local-task --input=4xi32=1,2,3,4 | FileCheck %s --check-prefix=NESTED
// RUN: mdc-run --module=%t/staged.vmfb --function=shared --device=local-task --device=local-task --device=local-task --input=4xi32=1,2,3,4 | FileCheck %s --check-prefix=SHARED
// NESTED: 4xi32=2 16 54 128
// SHARED: 4xi32=3 6 9 12

// CHECK-LABEL: util.func public @nested$host(
// CHECK:         util.call @nested$host.nested(
// CHECK-LABEL: util.func private @nested$host.nested(
// CHECK:         util.call @nested$host.helper(
// CHECK-LABEL: util.func private @nested$host.helper(
// CHECK:         util.call @nested$host.square_then_double(
// CHECK-LABEL: util.func private @nested$host.square_then_double(
// CHECK:         util.call @nested$host.double_on_c(
util.func private @double_on_c(%x: tensor<4xi32>) -> tensor<4xi32> attributes {
    inlining_policy = #util.inline.never, stream.affinity = #hal.device.affinity<@device_c>} {
  %y = arith.addi %x, %x : tensor<4xi32>
  util.return %y : tensor<4xi32>
}
util.func private @square_then_double(%x: tensor<4xi32>) -> tensor<4xi32> attributes {
    inlining_policy = #util.inline.never, stream.affinity = #hal.device.affinity<@device_c>} {
  %s = arith.muli %x, %x : tensor<4xi32>
  %d = util.call @double_on_c(%s) : (tensor<4xi32>) -> tensor<4xi32>
  util.return %d : tensor<4xi32>
}
func.func private @helper(%x: tensor<4xi32>) -> tensor<4xi32> {
  %on_a = "flow.tensor.clone"(%x) {stream.affinity = #hal.device.affinity<@device_a>} : (tensor<4xi32>) -> tensor<4xi32>
  %d = util.call @square_then_double(%on_a) : (tensor<4xi32>) -> tensor<4xi32>
  return %d : tensor<4xi32>
}
func.func public @nested(%x: tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %d = call @helper(%x) : (tensor<4xi32>) -> tensor<4xi32>
  %r = arith.muli %d, %x : tensor<4xi32>
  return %r : tensor<4xi32>
}
func.func public @shared(%x: tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %on_a = "flow.tensor.clone"(%x) {stream.affinity = #hal.device.affinity<@device_a>} : (tensor<4xi32>) -> tensor<4xi32>
  %d = util.call @double_on_c(%on_a) : (tensor<4xi32>) -> tensor<4xi32>
  %r = arith.addi %d, %x : tensor<4xi32>
  return %r : tensor<4xi32>
}
func.func public @fenced(%x: tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}) attributes {iree.abi.model = "coarse-fences"} {
  %on_a = "flow.tensor.clone"(%x) {stream.affinity = #hal.device.affinity<@device_a>} : (tensor<4xi32>) -> tensor<4xi32>
  %d = util.call @double_on_c(%on_a) : (tensor<4xi32>) -> tensor<4xi32>
  %r = arith.subi %d, %x : tensor<4xi32>
  return %r : tensor<4xi32>
}
