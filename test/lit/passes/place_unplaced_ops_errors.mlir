// place-unplaced-ops, negative: an op on a device the module does not
// declare is an error, with its location, and no IR is written.
// RUN: (mdc-opt %s --pass=place-unplaced-ops 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s --check-prefix=UNDECLARED
// UNDECLARED: place_unplaced_ops_errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'stream.tensor.splat' runs on device 'device_c', which the module does not declare
// UNDECLARED-NOT: util.func
// UNDECLARED: rc=1
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @undeclared(%v: f32) -> !stream.resource<*> {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@device_a>) tensor<4xf32> : index
    %c = stream.tensor.splat on(#hal.device.affinity<@device_c>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    util.return %c : !stream.resource<*>
  }
}
