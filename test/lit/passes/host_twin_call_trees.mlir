// host-entry-points gives each twin a private copy of its function and of
// every function the copy reaches that is, or calls, a never-inlined one:
// one copy per call, so each never-inlined function the twin reaches has
// one caller (IREE gives its arguments one lifetime).
// RUN: mdc-opt %s --split-input-file --pass=host-entry-points --device=a=local[0] --device=b=vulkan[0] --device=c=local[1] | FileCheck %s

// Nested and shared: @leaf is reached twice from @f (through @mid and
// directly) and is called by @g as well; @inlined reaches nothing.
// CHECK-LABEL: util.func private @leaf(
// CHECK-LABEL: util.func private @mid(
// CHECK:         util.call @leaf(
// CHECK-LABEL: util.func public @f(
// CHECK:         util.call @mid(
// CHECK:         util.call @leaf(
// CHECK:         util.call @inlined(
// CHECK-LABEL: util.func public @g(
// CHECK:         util.call @leaf(
// CHECK-LABEL: util.func public @f$host(
// CHECK:         util.call @f$host.f(
// CHECK-LABEL: util.func public @g$host(
// CHECK:         util.call @g$host.g(
// CHECK-LABEL: util.func private @f$host.f(
// CHECK-SAME:    {iree.abi.affinity = #hal.device.promise<@device_b>}
// CHECK:         util.call @f$host.mid(
// CHECK:         util.call @f$host.leaf_1(
// CHECK:         util.call @inlined(
// CHECK-LABEL: util.func private @f$host.mid(
// CHECK-SAME:    inlining_policy = #util.inline.never
// CHECK:         util.call @f$host.leaf(
// CHECK-LABEL: util.func private @f$host.leaf(
// CHECK-LABEL: util.func private @f$host.leaf_1(
// CHECK-LABEL: util.func private @g$host.g(
// CHECK:         util.call @g$host.leaf(
// CHECK-LABEL: util.func private @g$host.leaf(
// CHECK-NOT:   $host.
util.func private @leaf(%x: tensor<4xf32>) -> tensor<4xf32> attributes {inlining_policy = #util.inline.never} {
  util.return %x : tensor<4xf32>
}
util.func private @mid(%x: tensor<4xf32>) -> tensor<4xf32> attributes {inlining_policy = #util.inline.never} {
  %y = util.call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %y : tensor<4xf32>
}
util.func private @inlined(%x: tensor<4xf32>) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
util.func public @f(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> tensor<4xf32> {
  %y = util.call @mid(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = util.call @leaf(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %w = util.call @inlined(%z) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %w : tensor<4xf32>
}
util.func public @g(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> tensor<4xf32> {
  %y = util.call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %y : tensor<4xf32>
}

// -----

// Negative: a twin whose function reaches no never-inlined function calls
// the function itself; a public without a twin (values on CPUs only) keeps
// its call to the never-inlined one; a recursive call graph gets no copies.
// CHECK-LABEL: util.func public @plain$host(
// CHECK:         util.call @plain(
// CHECK-NOT:     $host.
util.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
util.func private @kept(%x: tensor<4xf32>) -> tensor<4xf32> attributes {inlining_policy = #util.inline.never} {
  util.return %x : tensor<4xf32>
}
util.func public @plain(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> tensor<4xf32> {
  %y = util.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %y : tensor<4xf32>
}
util.func public @cpus_only(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_c>}) -> tensor<4xf32> {
  %y = util.call @kept(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: util.func public @loops$host(
// CHECK:         util.call @loops(
// CHECK-NOT:     $host.
util.func private @again(%x: tensor<4xf32>) -> tensor<4xf32> attributes {inlining_policy = #util.inline.never} {
  %y = util.call @again(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %y : tensor<4xf32>
}
util.func public @loops(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> tensor<4xf32> {
  %y = util.call @again(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %y : tensor<4xf32>
}
