// host-entry-points: @F$host takes and returns every tensor on the first
// local device and moves each value declared on a device the CPU cannot
// reach to and from it around a call of @F.
// RUN: mdc-opt %s --split-input-file --pass=host-entry-points --device=a=local[0] --device=b=vulkan[0] --device=c=local[1] | FileCheck %s
// A forced staged link between two CPUs counts as memory the host cannot use.
// RUN: mdc-opt %s --split-input-file --pass=host-entry-points --device=a=local[0] --device=b=local[1] --device=c=local[2] --link=a:b=staged | FileCheck %s --check-prefix=LINKED
// Two CPUs that share memory: no twin anywhere.
// RUN: mdc-opt %s --split-input-file --pass=host-entry-points --device=a=local[0] --device=b=local[1] --device=c=local[2] | FileCheck %s --check-prefix=SHARED
// RUN: (mdc-opt %S/Inputs/host_entry_point_taken.mlir --pass=host-entry-points --device=a=local[0] --device=b=cuda[0] 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=TAKEN

// CHECK-LABEL: util.func public @moved(
// CHECK-LABEL: util.func public @moved$host(
// CHECK-SAME:    %[[X:.+]]: tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %[[N:.+]]: index)
// CHECK-SAME:    -> (tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
// CHECK:         %[[D:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x4xf32>
// CHECK:         %[[XB:.+]] = flow.tensor.transfer %[[X]] : tensor<?x4xf32>{%[[D]]} to #hal.device.promise<@device_b>
// CHECK:         %[[R:.+]]:2 = util.call @moved(%[[XB]], %[[N]])
// CHECK:         %[[ZA:.+]] = flow.tensor.transfer %[[R]]#1 : tensor<4xf32> to #hal.device.promise<@device_a>
// CHECK:         util.return %[[R]]#0, %[[ZA]]
// LINKED-LABEL:  util.func public @moved$host(
// SHARED-NOT:    $host
util.func public @moved(%x: tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, %n: index)
    -> (tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x4xf32>
  %y = flow.tensor.transfer %x : tensor<?x4xf32>{%d} to #hal.device.promise<@device_a>
  %z = arith.constant dense<1.0> : tensor<4xf32>
  util.return %y, %z : tensor<?x4xf32>, tensor<4xf32>
}

// -----

// Values on CPU devices only (device_c shares the host's memory), a private
// function and a function without affinities: no twin.
// CHECK-LABEL: util.func public @cpus_only(
// CHECK-NOT:   $host
// LINKED-NOT:  $host
util.func public @cpus_only(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_c>}) -> tensor<4xf32> {
  %y = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %z = flow.tensor.transfer %y : tensor<4xf32> to #hal.device.promise<@device_a>
  util.return %z : tensor<4xf32>
}
util.func private @helper(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
util.func public @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = util.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %y : tensor<4xf32>
}

// -----

// A function already in IREE's buffer-view ABI gets no twin: its caller
// places the buffers.
// CHECK-LABEL: util.func public @lowered(
// CHECK-NOT:   $host
// LINKED-LABEL: util.func public @lowered(
// LINKED-NOT:   @lowered$host
util.func public @lowered(%arg0: !hal.buffer_view {iree.abi.affinity = #hal.device.promise<@device_b>}) -> !hal.buffer_view {
  util.return %arg0 : !hal.buffer_view
}

// -----

// func.func (before IREE's input phase) works the same, with func.call.
// CHECK-LABEL: func.func public @source_level$host(
// CHECK-SAME:    tensor<2xi8> {iree.abi.affinity = #hal.device.promise<@device_a>, iree.abi.name = "x"}
// CHECK:         flow.tensor.transfer %{{.+}} : tensor<2xi8> to #hal.device.promise<@device_b>
// CHECK:         call @source_level(
// CHECK:         return
// LINKED-LABEL:  func.func public @source_level$host(
func.func public @source_level(%x: tensor<2xi8> {iree.abi.affinity = #hal.device.promise<@device_b>, iree.abi.name = "x"})
    -> (tensor<2xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  return %x : tensor<2xi8>
}

// TAKEN: host_entry_point_taken.mlir:{{[0-9]+}}:{{[0-9]+}}: error: the program defines '@f$host', the name of the host entry point mdc adds for '@f'
// TAKEN: note: rename the function, or compile with --no-host-entry-points
// TAKEN: rc=1
