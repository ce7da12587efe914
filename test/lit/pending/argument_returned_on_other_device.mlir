// Pending (found on the H200, gpu_random seed 20261202 index 4, and in the
// last note as seed 20261201 p287): an argument declared on device_b and
// returned unchanged as a result declared on device_a is not staged. The
// module compiles for local + cuda and the verifier accepts it (no queue
// operation touches the buffer), but the caller gets device_b's buffer
// back as device_a's result: on the H200 mdc-run fails with
// "PERMISSION_DENIED ... buffer has DEVICE_LOCAL, operation requires
// HOST_VISIBLE". The correct lowering stages the value b -> a.
// XFAIL: *
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --no-host-entry-points --compile-to=mdc -o - | FileCheck %s
// CHECK: util.call @__mdc_stage
func.func public @passthrough(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  return %x : tensor<4xf32>
}
