// place-unplaced-ops alone (the first step of transfer-insertion): an op
// with no affinity gets one by residence.py's rule and nothing is staged;
// where every pair of devices shares memory nothing is placed (IREE places
// it). test/lit/passes/residence.mlir has the rule itself.
// RUN: mdc-opt %s --pass=place-unplaced-ops --split-input-file | FileCheck %s
// RUN: mdc-opt %s --pass=place-unplaced-ops --split-input-file | FileCheck %s --check-prefix=NONE
// NONE-NOT: __mdc_stage
// NONE-NOT: tensor<?xi8>

// Positive: 16 bytes from each device, a tie; the default device_a wins.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  stream.executable private @ex {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%arg0: !stream.binding, %arg1: !stream.binding, %arg2: !stream.binding) {
        return
      }
    }
  }
  util.func public @placed(%v: f32, %w: f32) -> !stream.resource<*> {
    %sa = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %sb = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%sa}
    %b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %w : f32 -> tensor<4xf32> in !stream.resource<*>{%sb}
    %tb = stream.async.transfer %b : !stream.resource<*>{%sb} from(#hal.device.affinity<@device_b>) -> !stream.resource<*>{%sb}
    %ta = stream.async.transfer %a : !stream.resource<*>{%sa} from(#hal.device.affinity<@device_a>) -> !stream.resource<*>{%sa}
    %so = stream.tensor.sizeof tensor<4xf32> : index
    %r = stream.tensor.dispatch @ex::@entry(%tb, %ta) : (tensor<4xf32> in !stream.resource<*>{%sb}, tensor<4xf32> in !stream.resource<*>{%sa}) -> tensor<4xf32> in !stream.resource<*>{%so}
    util.return %r : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @placed(
// CHECK:      %[[TB:.+]] = stream.async.transfer %{{.+}} from(#hal.device.affinity<@device_b>) -> !stream.resource<*>
// CHECK-NEXT: %[[TA:.+]] = stream.async.transfer %{{.+}} from(#hal.device.affinity<@device_a>) -> !stream.resource<*>
// CHECK-NEXT: stream.tensor.sizeof tensor<4xf32>
// CHECK-NEXT: stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @ex::@entry(%[[TB]], %[[TA]])

// -----

// Negative: two local devices share memory; the dispatch stays unplaced.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  stream.executable private @ex {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%arg0: !stream.binding, %arg1: !stream.binding, %arg2: !stream.binding) {
        return
      }
    }
  }
  util.func public @shared(%v: f32, %w: f32) -> !stream.resource<*> {
    %sa = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %sb = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%sa}
    %b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %w : f32 -> tensor<4xf32> in !stream.resource<*>{%sb}
    %tb = stream.async.transfer %b : !stream.resource<*>{%sb} from(#hal.device.affinity<@device_b>) -> !stream.resource<*>{%sb}
    %ta = stream.async.transfer %a : !stream.resource<*>{%sa} from(#hal.device.affinity<@device_a>) -> !stream.resource<*>{%sa}
    %so = stream.tensor.sizeof tensor<4xf32> : index
    %r = stream.tensor.dispatch @ex::@entry(%tb, %ta) : (tensor<4xf32> in !stream.resource<*>{%sb}, tensor<4xf32> in !stream.resource<*>{%sa}) -> tensor<4xf32> in !stream.resource<*>{%so}
    util.return %r : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @shared(
// CHECK:      stream.tensor.sizeof tensor<4xf32>
// CHECK-NEXT: stream.tensor.dispatch @ex::@entry(
