// Found by the fuzzer (test/e2e/fuzz.py, seed 796041255 case 124: a
// mutated test with the line declaring @nv deleted): an affinity naming a
// device the module does not declare made transfer-insertion's memory model
// fail with an internal KeyError. It is a mistake in the input, reported at
// the op that names the device.
// RUN: (mdc-opt %s --pass=transfer-insertion 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
module attributes {stream.affinity.default = #hal.device.affinity<@gpu>} {
  util.global private @cpu = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.func public @f(%v: f32) -> !hal.buffer_view {
    %size = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@cpu>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    // CHECK: opt_undeclared_device.mlir:[[# @LINE + 1]]:12: error: 'stream.async.cast' runs on device 'gpu', which the module does not declare
    %ext = stream.async.cast on(#hal.device.affinity<@gpu>) %x : !stream.resource<*>{%size} -> !stream.resource<external>{%size}
    // CHECK-NEXT: note: declared devices: cpu
    %out = stream.tensor.export on(#hal.device.affinity<@gpu>) %ext : tensor<4xf32> in !stream.resource<external>{%size} -> !hal.buffer_view
    util.return %out : !hal.buffer_view
  }
}
// CHECK: rc=1
