// Rule default-device: an argument declared on no device is placed by the caller (mdc-run,
// load) on the manifest's default device, and IREE imports it on its own
// default device (mdc's place-unplaced-ops makes every such import run
// there). The two must agree: mdc once wrote no default into the manifest,
// the shim took the first --device for it while IREE took the device whose
// name sorts first, and a local buffer reached a Vulkan queue at run time
// ("buffer is not backed by the Vulkan HAL").
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s

// Rejected: the manifest's default is device_a (local), the module imports
// the argument on device_b (cuda).
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @f(%arg0: !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @f(%input0: tensor<4xf32>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22device_b\22,\22spec\22:\22cuda[0]\22},{\22name\22:\22device_a\22,\22spec\22:\22local[0]\22}],\22default\22:\22device_a\22}"}} {
    %c16 = arith.constant 16 : index
    %b = util.global.load immutable @device_b : !hal.device
    %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
    %allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    // CHECK: default_device.mlir:[[# @LINE + 1]]:5: error: argument 0 of @f has no device of its own: mdc's default device (the manifest's, where the caller places it) is device_a (local), IREE's (where the module imports it) is device_b (cuda)
    hal.buffer.assert<%buffer : !hal.buffer> message("tensor") allocator(%allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    // CHECK-NEXT: note: device_b and device_a are a staged pair
    util.return
  }
}

// -----

// Rejected: a manifest with no "default" (an older mdc-compile's) stands
// for its first device, device_a, as the shim reads it.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"vulkan", {ordinal = 0 : index}> : !hal.device
  util.func public @g(%arg0: !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @g(%input0: tensor<4xf32>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22device_a\22,\22spec\22:\22local[0]\22},{\22name\22:\22device_b\22,\22spec\22:\22vulkan[0]\22}]}"}} {
    %c16 = arith.constant 16 : index
    %b = util.global.load immutable @device_b : !hal.device
    %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
    %allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    // CHECK: default_device.mlir:[[# @LINE + 1]]:5: error: argument 0 of @g has no device of its own: mdc's default device (the manifest's, where the caller places it) is device_a (local), IREE's (where the module imports it) is device_b (vulkan)
    hal.buffer.assert<%buffer : !hal.buffer> message("tensor") allocator(%allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    util.return
  }
}

// -----

// Accepted: the same import with the manifest's default on device_b; and an
// argument declared on device_b is the declaration's, not the default's.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @agrees(%arg0: !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @agrees(%input0: tensor<4xf32>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22device_a\22,\22spec\22:\22local[0]\22},{\22name\22:\22device_b\22,\22spec\22:\22cuda[0]\22}],\22default\22:\22device_b\22}"}} {
    %c16 = arith.constant 16 : index
    %b = util.global.load immutable @device_b : !hal.device
    %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
    %allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    hal.buffer.assert<%buffer : !hal.buffer> message("tensor") allocator(%allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    util.return
  }
  util.func public @declared(%arg0: !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @declared(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22device_a\22,\22spec\22:\22local[0]\22},{\22name\22:\22device_b\22,\22spec\22:\22cuda[0]\22}],\22default\22:\22device_b\22}"}} {
    %c16 = arith.constant 16 : index
    %a = util.global.load immutable @device_a : !hal.device
    %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
    %allocator = hal.device.allocator<%a : !hal.device> : !hal.allocator
    hal.buffer.assert<%buffer : !hal.buffer> message("tensor") allocator(%allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    util.return
  }
}

// -----

// Accepted: with no manifest (IREE's own output) nothing says where the
// caller places the argument.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @stock(%arg0: !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @stock(%input0: tensor<4xf32>)"}} {
    %c16 = arith.constant 16 : index
    %b = util.global.load immutable @device_b : !hal.device
    %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
    %allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    hal.buffer.assert<%buffer : !hal.buffer> message("tensor") allocator(%allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    util.return
  }
}
// CHECK-NOT: error
// CHECK: rc=1
