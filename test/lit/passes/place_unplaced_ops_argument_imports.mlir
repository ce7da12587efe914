// place-unplaced-ops: an argument declared on no device lives on the
// default device (device_a), where the caller places it. IREE imports it
// on each device that reads it (device_b, device_c), one buffer for both.
// An import that crosses a staged pair (with device_a, or with another
// device importing the same argument) is made on device_a and moved to
// where IREE imported it; an import that crosses none stays.
// RUN: mdc-opt %s --pass=place-unplaced-ops --link=b:c=staged | FileCheck %s --check-prefix=BC
// RUN: mdc-opt %s --pass=place-unplaced-ops --link=c:b=staged | FileCheck %s --check-prefix=BC
// RUN: mdc-opt %s --pass=place-unplaced-ops --link=a:b=staged | FileCheck %s --check-prefix=AB
// Negative: every pair shares memory, nothing moves.
// RUN: mdc-opt %s --pass=place-unplaced-ops | FileCheck %s --check-prefix=NONE

// Positive: device_b and device_c are a staged pair; both imports move.
// BC-LABEL: util.func public @f(
// BC:      %[[IB:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0
// BC-NEXT: %[[MB:.+]] = stream.async.transfer %[[IB]] : !stream.resource<external>{%{{.+}}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>)
// BC-NEXT: stream.async.cast on(#hal.device.affinity<@device_b>) %[[MB]]
// BC:      %[[IC:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0
// BC-NEXT: %[[MC:.+]] = stream.async.transfer %[[IC]] : !stream.resource<external>{%{{.+}}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_c>)
// BC-NEXT: stream.async.cast on(#hal.device.affinity<@device_c>) %[[MC]]

// Negative: device_a and device_b are staged, device_c shares memory with
// both: only device_b's import moves.
// AB-LABEL: util.func public @f(
// AB:      %[[IB:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %arg0
// AB-NEXT: stream.async.transfer %[[IB]] : !stream.resource<external>{%{{.+}}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>)
// AB:      %[[IC:.+]] = stream.tensor.import on(#hal.device.affinity<@device_c>) %arg0
// AB-NEXT: stream.async.cast on(#hal.device.affinity<@device_c>) %[[IC]]

// NONE-LABEL: util.func public @f(
// NONE:     stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0
// NONE:     stream.tensor.import on(#hal.device.affinity<@device_c>) %arg0
// NONE-NOT: stream.tensor.import on(#hal.device.affinity<@device_a>)

module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  util.global private @device_c = #hal.device.target<"local", {ordinal = 2 : index}> : !hal.device
  stream.executable private @ex {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%arg0: !stream.binding, %arg1: !stream.binding) {
        return
      }
    }
  }
  util.func public @f(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @f(%input0: tensor<4xf32>) -> (%output0: tensor<4xf32>)"}} {
    %0 = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %1 = stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0 : !hal.buffer_view -> tensor<4xf32> in !stream.resource<external>{%0}
    %2 = stream.async.cast on(#hal.device.affinity<@device_b>) %1 : !stream.resource<external>{%0} -> !stream.resource<*>{%0}
    %3 = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @ex::@entry(%2) : (tensor<4xf32> in !stream.resource<*>{%0}) -> tensor<4xf32> in !stream.resource<*>{%0}
    %4 = stream.tensor.sizeof on(#hal.device.affinity<@device_c>) tensor<4xf32> : index
    %5 = stream.tensor.import on(#hal.device.affinity<@device_c>) %arg0 : !hal.buffer_view -> tensor<4xf32> in !stream.resource<external>{%4}
    %6 = stream.async.cast on(#hal.device.affinity<@device_c>) %5 : !stream.resource<external>{%4} -> !stream.resource<*>{%4}
    %7 = stream.tensor.dispatch on(#hal.device.affinity<@device_c>) @ex::@entry(%6) : (tensor<4xf32> in !stream.resource<*>{%4}) -> tensor<4xf32> in !stream.resource<*>{%4}
    %8 = stream.async.transfer %3 : !stream.resource<*>{%0} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%0}
    %9 = stream.async.transfer %7 : !stream.resource<*>{%4} from(#hal.device.affinity<@device_c>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>{%4}
    %10 = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %11 = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @ex::@entry(%8, %9) : (tensor<4xf32> in !stream.resource<*>{%0}, tensor<4xf32> in !stream.resource<*>{%4}) -> tensor<4xf32> in !stream.resource<*>{%10}
    %12 = stream.async.cast on(#hal.device.affinity<@device_a>) %11 : !stream.resource<*>{%10} -> !stream.resource<external>{%10}
    %13 = stream.tensor.export on(#hal.device.affinity<@device_a>) %12 : tensor<4xf32> in !stream.resource<external>{%10} -> !hal.buffer_view
    util.return %13 : !hal.buffer_view
  }
}
