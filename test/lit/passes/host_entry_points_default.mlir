// host-entry-points: a value declared on no device lives on the module's
// default device (IREE's: the device whose name sorts first, whatever the
// --device order), so where that is a device the CPU cannot reach the
// function gets a twin that moves it there and back. Before, such a
// function got none, and mdc-run refused it on local + Vulkan.
// RUN: mdc-opt %s --split-input-file --pass=host-entry-points --device=device_b=local[0] --device=device_a=vulkan[0] | FileCheck %s
// RUN: mdc-opt %s --split-input-file --pass=host-entry-points --device=device_a=vulkan[0] --device=device_b=local[0] | FileCheck %s
// The default is the CPU (device_a): @plain, declared on no device, gets no twin.
// RUN: mdc-opt %s --split-input-file --pass=host-entry-points --device=device_a=local[0] --device=device_b=vulkan[0] | FileCheck %s --check-prefix=CPU
// CPU-NOT: @plain$host

// CHECK-LABEL: util.func public @plain$host(
// CHECK-SAME:    %[[X:.+]]: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
// CHECK-SAME:    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
// CHECK:         %[[XA:.+]] = flow.tensor.transfer %[[X]] : tensor<4xf32> to #hal.device.promise<@device_a>
// CHECK:         %[[R:.+]] = util.call @plain(%[[XA]])
// CHECK:         %[[RB:.+]] = flow.tensor.transfer %[[R]] : tensor<4xf32> to #hal.device.promise<@device_b>
// CHECK:         util.return %[[RB]]
util.func public @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.mulf %x, %x : tensor<4xf32>
  util.return %y : tensor<4xf32>
}

// -----

// An argument declared on the CPU stays there; only the result, declared
// on no device, comes back from the default device.
// CHECK-LABEL: util.func public @from_cpu$host(
// CHECK-NOT:     flow.tensor.transfer %arg0
// CHECK:         %[[R:.+]] = util.call @from_cpu(%arg0)
// CHECK:         flow.tensor.transfer %[[R]] : tensor<4xf32> to #hal.device.promise<@device_b>
util.func public @from_cpu(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> tensor<4xf32> {
  %a = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_a>
  util.return %a : tensor<4xf32>
}
