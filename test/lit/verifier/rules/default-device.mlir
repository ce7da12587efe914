// Rule default-device: IREE imports an argument declared on no device on its
// own default device, which may not reach the memory of mdc's default
// device, where the caller places it.
// Refused: the manifest's default is the CPU, the module imports the
// argument on the GPU. Accepted: the same import with the manifest's
// default on the GPU.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @defaults_disagree
// OUT: @defaults_agree
// OUT-NOT: @defaults_disagree

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @defaults_disagree(%arg0: !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @defaults_disagree(%input0: tensor<4xf32>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22device_a\22,\22spec\22:\22local[0]\22},{\22name\22:\22device_b\22,\22spec\22:\22cuda[0]\22}],\22default\22:\22device_a\22}"}} {
    %c16 = arith.constant 16 : index
    %b = util.global.load immutable @device_b : !hal.device
    %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
    %allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    // CHECK: default-device.mlir:[[# @LINE + 1]]:5: error: argument 0 of @defaults_disagree has no device of its own: mdc's default device (the manifest's, where the caller places it) is device_a (local), IREE's (where the module imports it) is device_b (cuda)
    hal.buffer.assert<%buffer : !hal.buffer> message("tensor") allocator(%allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    // CHECK-NEXT: note: device_b and device_a are a staged pair: cuda and local memories are incompatible
    util.return
  }
}
// CHECK-NOT: error:
// CHECK-NOT: more violation
// CHECK: rc=1

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @defaults_agree(%arg0: !hal.buffer_view) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @defaults_agree(%input0: tensor<4xf32>)", mdc.manifest = "{\22format\22:\22mdc.manifest/1\22,\22devices\22:[{\22name\22:\22device_a\22,\22spec\22:\22local[0]\22},{\22name\22:\22device_b\22,\22spec\22:\22cuda[0]\22}],\22default\22:\22device_b\22}"}} {
    %c16 = arith.constant 16 : index
    %b = util.global.load immutable @device_b : !hal.device
    %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
    %allocator = hal.device.allocator<%b : !hal.device> : !hal.allocator
    hal.buffer.assert<%buffer : !hal.buffer> message("tensor") allocator(%allocator : !hal.allocator) minimum_length(%c16) type(DeviceVisible) usage("Transfer|DispatchStorage")
    util.return
  }
}
