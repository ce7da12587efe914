// declared-devices-default, on the program as IREE's input phase leaves it:
// a program that declares its own devices gets IREE's default device, the
// name that sorts first (not the first declared), as
// stream.affinity.default. A module that has a default keeps it; one that
// declares no devices (they come from --device), or declares one without a
// value, is left as it is.
// RUN: mdc-opt %s --pass=declared-devices-default --split-input-file | FileCheck %s
// Negative: without the pass, no module has a default it did not declare.
// RUN: mdc-opt %s --split-input-file | FileCheck %s --check-prefix=NONE
// NONE-NOT: stream.affinity.default = #hal.device.affinity<@dev_a>

// Positive: declared dev_z first, dev_a sorts first.
// CHECK-LABEL: module attributes {stream.affinity.default = #hal.device.affinity<@dev_a>}
// CHECK-NEXT: util.global private @dev_z
// CHECK-NEXT: util.global private @dev_a
module {
  util.global private @dev_z = #hal.device.alias<"local"[0]> : !hal.device
  util.global private @dev_a = #hal.device.alias<"local"[1]> : !hal.device
  util.func public @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
}

// -----

// Negative: the module's own default stays.
// CHECK-LABEL: module attributes {stream.affinity.default = #hal.device.affinity<@dev_z>}
// CHECK-NEXT: util.global private @dev_z
module attributes {stream.affinity.default = #hal.device.affinity<@dev_z>} {
  util.global private @dev_z = #hal.device.alias<"local"[0]> : !hal.device
  util.global private @dev_a = #hal.device.alias<"local"[1]> : !hal.device
  util.func public @g(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
}

// -----

// Negative: no device globals (the command line declares the devices).
// CHECK-NOT: stream.affinity.default
// CHECK-LABEL: util.func public @h(
module {
  util.func public @h(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@dev_b>
    util.return %y : tensor<4xf32>
  }
}

// -----

// Negative: device globals declared without a value (IREE defines them from
// --iree-hal-target-device, and sets the default itself only where the
// module has none), also beside one the program defines.
// CHECK-NOT: stream.affinity.default
// CHECK-LABEL: util.func public @k(
module {
  util.global private @dev_a : !hal.device
  util.global private @dev_b : !hal.device
  util.func public @k(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@dev_a>}) -> tensor<4xf32> {
    %y = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@dev_b>
    util.return %y : tensor<4xf32>
  }
}

// -----

// CHECK-NOT: stream.affinity.default
// CHECK-LABEL: util.func public @m(
module {
  util.global private @dev_a = #hal.device.alias<"local"[0]> : !hal.device
  util.global private @dev_b : !hal.device
  util.func public @m(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@dev_b>
    util.return %y : tensor<4xf32>
  }
}
