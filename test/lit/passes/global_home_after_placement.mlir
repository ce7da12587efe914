// A global whose stored value has no device until placement (a dispatch fed
// by a move with no target) lives where that value is placed, not where the
// first analysis, before placement, guessed from its loads: residence.py
// records the homes of globals anew after placing ops. The combined pass and
// its two steps run one after the other agree: @g lives on device_b, so the
// read on device_a is staged and the store is not.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion | FileCheck %s
// RUN: mdc-opt %s --staging=copy --pass=place-unplaced-ops,stage-crossings | FileCheck %s
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private mutable @g : !stream.resource<variable>
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
  util.func public @write(%w: f32) {
    %sb = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<16xf32> : index
    %b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %w : f32 -> tensor<16xf32> in !stream.resource<*>{%sb}
    %tb = stream.async.transfer %b : !stream.resource<*>{%sb} from(#hal.device.affinity<@device_b>) -> !stream.resource<*>{%sb}
    %so = stream.tensor.sizeof tensor<16xf32> : index
    %r = stream.tensor.dispatch @ex::@entry(%tb) : (tensor<16xf32> in !stream.resource<*>{%sb}) -> tensor<16xf32> in !stream.resource<*>{%so}
    %v = stream.async.clone %r : !stream.resource<*>{%so} -> !stream.resource<variable>{%so}
    util.global.store %v, @g : !stream.resource<variable>
    util.return
  }
  util.func public @read(%size: index) -> !stream.resource<*> {
    %k = util.global.load @g : !stream.resource<variable>
    %c = stream.async.clone on(#hal.device.affinity<@device_a>) %k : !stream.resource<variable>{%size} -> !stream.resource<*>{%size}
    util.return %c : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @write(
// CHECK:      stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @ex::@entry
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      util.global.store %{{.+}}, @g
// CHECK-LABEL: util.func public @read(
// CHECK:      util.global.load @g
// CHECK:      util.call @__mdc_stage_gpu_to_local_via_device_b(
// CHECK:      stream.async.clone on(#hal.device.affinity<@device_a>)
