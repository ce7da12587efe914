// Regression, fixed (was: regression in e550706, passes/analysis/residence_graph.py): the error for
// GPUs of different drivers with no local device lost its source location
// when the crossing is implicit (an op on one GPU reading a value that lives
// on the other). residence_graph.snapshot, which transfer-insertion now runs
// before rewriting, calls MemoryModel.policy() for every crossing edge and
// lets the MdcError escape without the op's location; before, the error was
// raised from _rewrite_implicit_crossings through _policy(), which adds it.
// Expected: "cross_driver_implicit_error_location.mlir:LINE:12: error: values
// move between amd (hip) and nv (cuda), ..." (location of the stream.async.cast
// on nv that reads the hip value), exit status 1.
// Got: "mdc-opt: error: values move between amd (hip) and nv (cuda), ..." with
// no location. (Explicit transfers still get theirs: the transfer op runs on
// its source, so the graph has no crossing edge for it.)

// RUN: (mdc-opt %s --pass=transfer-insertion 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s

// The reverse direction, as an implicit crossing: the location is the op on
// the destination that reads the value.
module attributes {stream.affinity.default = #hal.device.affinity<@nv>} {
  util.global private @nv = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @amd = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @implicit_crossing(%v: f32) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@amd>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@amd>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    // CHECK: cross_driver_implicit_error_location.mlir:[[# @LINE + 1]]:12: error: values move between amd (hip) and nv (cuda), GPUs of different drivers, and the program declares no local device
    %ext = stream.async.cast on(#hal.device.affinity<@nv>) %x : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    // CHECK-NEXT: note: no stock HAL op
    // CHECK-NEXT: note: add one, e.g. --device=host=local[0]
    %out = stream.tensor.export on(#hal.device.affinity<@nv>) %ext : tensor<4xf32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK: rc=1
