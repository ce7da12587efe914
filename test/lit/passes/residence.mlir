// Placement of ops with no affinity (residence.py's rule), seen through
// transfer-insertion: the op gets on(...), transfers with no target that feed
// it from its own device stay, and only the crossings from the other device
// are staged.
//   1. the device holding the most operand bytes (static encodings; a dynamic
//      operand counts as one byte);
//   2. on a tie the module default device if it holds an operand, else the
//      first operand's device;
//   3. no placed operand: the first placed consumer, else the default device.
// RUN: mdc-opt %s --staging=copy --pass=transfer-insertion --split-input-file | FileCheck %s

// Rule 2: 16 bytes each, the default device_a wins although its operand
// comes second.
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
  util.func public @tie_goes_to_default(%v: f32, %w: f32) -> !stream.resource<*> {
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
// CHECK-LABEL: util.func public @tie_goes_to_default(
// CHECK:      %[[A:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[B:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[B]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_b>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_b>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[DA:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[DB:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_device_b(%[[V]], %[[READY_V]], %[[DB]], %[[DA]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_a>) %[[S]]
// CHECK-NEXT: %[[FROM_B:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[I]]
// CHECK-NEXT: %[[FROM_A:.+]] = stream.async.transfer %[[A]] : !stream.resource<*>{%{{.+}}} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_a>) !stream.resource<*>
// CHECK-NEXT: stream.tensor.sizeof tensor<4xf32>
// CHECK-NEXT: stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @ex::@entry(%[[FROM_B]], %[[FROM_A]])
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      util.func private @__mdc_stage_gpu_to_local_via_device_b(

// -----

// Rule 1: 32 bytes on device_b against 16 on the default device_a.
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
  util.func public @most_bytes_wins(%v: f32, %w: f32) -> !stream.resource<*> {
    %sa = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %sb = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<2x2xf64> : index
    %a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%sa}
    %b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %w : f32 -> tensor<2x2xf64> in !stream.resource<*>{%sb}
    %ta = stream.async.transfer %a : !stream.resource<*>{%sa} from(#hal.device.affinity<@device_a>) -> !stream.resource<*>{%sa}
    %tb = stream.async.transfer %b : !stream.resource<*>{%sb} from(#hal.device.affinity<@device_b>) -> !stream.resource<*>{%sb}
    %so = stream.tensor.sizeof tensor<4xf32> : index
    %r = stream.tensor.dispatch @ex::@entry(%ta, %tb) : (tensor<4xf32> in !stream.resource<*>{%sa}, tensor<2x2xf64> in !stream.resource<*>{%sb}) -> tensor<4xf32> in !stream.resource<*>{%so}
    util.return %r : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @most_bytes_wins(
// CHECK:      %[[A:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: %[[B:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_a>) %[[A]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@device_a>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@device_a>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[DA:.+]] = util.global.load immutable @device_a : !hal.device
// CHECK-DAG:  %[[DB:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @device_b : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(%[[V]], %[[READY_V]], %[[DA]], %[[DB]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]]
// CHECK-NEXT: %[[FROM_A:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[I]]
// CHECK-NEXT: %[[FROM_B:.+]] = stream.async.transfer %[[B]] : !stream.resource<*>{%{{.+}}} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>
// CHECK-NEXT: stream.tensor.sizeof tensor<4xf32>
// CHECK-NEXT: stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @ex::@entry(%[[FROM_A]], %[[FROM_B]])
// CHECK-NOT:  util.call @__mdc_stage
// CHECK:      util.func private @__mdc_stage_local_to_gpu_via_device_b(

// -----

// Rule 1 with a dynamic operand: it counts as one byte, so the static 2 bytes
// on device_b win.
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
  util.func public @dynamic_counts_one_byte(%v: f32, %w: f32, %n: index) -> !stream.resource<*> {
    %sa = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<?xf32>{%n} : index
    %sb = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<2xi8> : index
    %a = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<?xf32>{%n} in !stream.resource<*>{%sa}
    %b = stream.tensor.splat on(#hal.device.affinity<@device_b>) %w : f32 -> tensor<2xi8> in !stream.resource<*>{%sb}
    %ta = stream.async.transfer %a : !stream.resource<*>{%sa} from(#hal.device.affinity<@device_a>) -> !stream.resource<*>{%sa}
    %tb = stream.async.transfer %b : !stream.resource<*>{%sb} from(#hal.device.affinity<@device_b>) -> !stream.resource<*>{%sb}
    %so = stream.tensor.sizeof tensor<4xf32> : index
    %r = stream.tensor.dispatch @ex::@entry(%ta, %tb) : (tensor<?xf32>{%n} in !stream.resource<*>{%sa}, tensor<2xi8> in !stream.resource<*>{%sb}) -> tensor<4xf32> in !stream.resource<*>{%so}
    util.return %r : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @dynamic_counts_one_byte(
// CHECK:      %[[SA:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<?xf32>{%[[N:.+]]} : index
// CHECK:      stream.tensor.export on(#hal.device.affinity<@device_a>) %{{.+}} : tensor<?xi8>{%[[SA]]}
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_device_b(
// CHECK:      stream.tensor.import on(#hal.device.affinity<@device_b>) %[[S]] : !hal.buffer_view -> tensor<?xi8>{%[[SA]]}
// CHECK-NEXT: %[[FROM_A:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[FROM_B:.+]] = stream.async.transfer %{{.+}} from(#hal.device.affinity<@device_b>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>
// CHECK:      stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @ex::@entry(%[[FROM_A]], %[[FROM_B]])
// CHECK-NOT:  util.call @__mdc_stage

// -----

// Rule 2 when the default device holds no operand: the first operand's
// device, whichever order the operands come in. The default is a third,
// unused local device.
module attributes {stream.affinity.default = #hal.device.affinity<@host>} {
  util.global private @host = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @gpu = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @cpu = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
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
  util.func public @tie_first_operand_gpu(%v: f32) -> !stream.resource<*> {
    %s = stream.tensor.sizeof tensor<4xf32> : index
    %g = stream.tensor.splat on(#hal.device.affinity<@gpu>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    %c = stream.tensor.splat on(#hal.device.affinity<@cpu>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    %r = stream.tensor.dispatch @ex::@entry(%g, %c) : (tensor<4xf32> in !stream.resource<*>{%s}, tensor<4xf32> in !stream.resource<*>{%s}) -> tensor<4xf32> in !stream.resource<*>{%s}
    util.return %r : !stream.resource<*>
  }
  util.func public @tie_first_operand_cpu(%v: f32) -> !stream.resource<*> {
    %s = stream.tensor.sizeof tensor<4xf32> : index
    %g = stream.tensor.splat on(#hal.device.affinity<@gpu>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    %c = stream.tensor.splat on(#hal.device.affinity<@cpu>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    %r = stream.tensor.dispatch @ex::@entry(%c, %g) : (tensor<4xf32> in !stream.resource<*>{%s}, tensor<4xf32> in !stream.resource<*>{%s}) -> tensor<4xf32> in !stream.resource<*>{%s}
    util.return %r : !stream.resource<*>
  }
}
// Operands used directly (no transfer): the one from the other device is
// staged right before the dispatch.
// CHECK-LABEL: util.func public @tie_first_operand_gpu(
// CHECK:      %[[G:.+]] = stream.tensor.splat on(#hal.device.affinity<@gpu>)
// CHECK-NEXT: %[[C:.+]] = stream.tensor.splat on(#hal.device.affinity<@cpu>)
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[C]]
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@cpu>) %[[C]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@cpu>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@cpu>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@cpu>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[DC:.+]] = util.global.load immutable @cpu : !hal.device
// CHECK-DAG:  %[[DG:.+]] = util.global.load immutable @gpu : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @gpu : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_local_to_gpu_via_gpu(%[[V]], %[[READY_V]], %[[DC]], %[[DG]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@gpu>) %[[S]]
// CHECK-NEXT: %[[C2:.+]] = stream.async.cast on(#hal.device.affinity<@gpu>) %[[I]]
// CHECK-NEXT: stream.tensor.dispatch on(#hal.device.affinity<@gpu>) @ex::@entry(%[[G]], %[[C2]])
// CHECK-NOT:  util.call @__mdc_stage
// CHECK-LABEL: util.func public @tie_first_operand_cpu(
// CHECK:      %[[G:.+]] = stream.tensor.splat on(#hal.device.affinity<@gpu>)
// CHECK-NEXT: %[[C:.+]] = stream.tensor.splat on(#hal.device.affinity<@cpu>)
// CHECK-NEXT: %[[N:.+]] = stream.resource.size %[[G]]
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@gpu>) %[[G]]
// CHECK-NEXT: %[[RES_V:[^ ,]+]], %[[TP_V:[^ ]+]] = stream.timepoint.barrier on(#hal.device.affinity<@gpu>) %[[E]] : !stream.resource<external>
// CHECK-NEXT: %[[READY_V:.+]] = stream.timepoint.export on(#hal.device.affinity<@gpu>) %[[TP_V]] => (!hal.fence)
// CHECK-NEXT: %[[V:.+]] = stream.tensor.export on(#hal.device.affinity<@gpu>) %[[RES_V]] : tensor<?xi8>
// CHECK-DAG:  %[[DC:.+]] = util.global.load immutable @cpu : !hal.device
// CHECK-DAG:  %[[DG:.+]] = util.global.load immutable @gpu : !hal.device
// CHECK-DAG:  %[[OWNER:.+]] = util.global.load immutable @gpu : !hal.device
// CHECK:      %[[S:.+]] = util.call @__mdc_stage_gpu_to_local_via_gpu(%[[V]], %[[READY_V]], %[[DG]], %[[DC]], %[[OWNER]])
// CHECK:      %[[I:.+]] = stream.tensor.import on(#hal.device.affinity<@cpu>) %[[S]]
// CHECK-NEXT: %[[G2:.+]] = stream.async.cast on(#hal.device.affinity<@cpu>) %[[I]]
// CHECK-NEXT: stream.tensor.dispatch on(#hal.device.affinity<@cpu>) @ex::@entry(%[[C]], %[[G2]])
// CHECK-NOT:  util.call @__mdc_stage

// -----

// Rule 3: no placed operand. A splat feeding an op on device_b runs on
// device_b (no crossing at all); one feeding nothing placed runs on the
// default device.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @placed_by_consumer(%v: f32) -> !hal.buffer_view {
    %s = stream.tensor.sizeof tensor<4xf32> : index
    %x = stream.tensor.splat %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    %ext = stream.async.cast on(#hal.device.affinity<@device_b>) %x : !stream.resource<*>{%s} -> !stream.resource<external>{%s}
    %out = stream.tensor.export on(#hal.device.affinity<@device_b>) %ext : tensor<4xf32> in !stream.resource<external>{%s} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
  util.func public @placed_by_default(%v: f32) -> !stream.resource<*> {
    %s = stream.tensor.sizeof tensor<4xf32> : index
    %x = stream.tensor.splat %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    util.return %x : !stream.resource<*>
  }
  // Keeps the module's pair in use, so the pass runs at all.
  util.func public @keeps_pair_staged(%v: f32) -> !stream.resource<*> {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@device_a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    %y = stream.async.transfer %x : !stream.resource<*>{%s} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%s}
    util.return %y : !stream.resource<*>
  }
}
// CHECK-LABEL: util.func public @placed_by_consumer(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_b>)
// CHECK-NEXT: %[[E:.+]] = stream.async.cast on(#hal.device.affinity<@device_b>) %[[X]]
// CHECK-NEXT: stream.tensor.export on(#hal.device.affinity<@device_b>) %[[E]] : tensor<4xf32>
// CHECK-NOT:  __mdc_stage
// CHECK-LABEL: util.func public @placed_by_default(
// CHECK:      %[[X:.+]] = stream.tensor.splat on(#hal.device.affinity<@device_a>)
// CHECK-NEXT: util.return %[[X]]
// CHECK-LABEL: util.func public @keeps_pair_staged(
// CHECK:      util.call @__mdc_stage_local_to_gpu_via_device_b(
