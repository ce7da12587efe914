// Regression: a mutable global stored on device_a and returned on device_b.
// Its load's clone runs on device_b, so the loaded value crosses there; the
// staged copy was cast back to the global's `variable` lifetime before the
// clone, and IREE 3.13's stream usage refinement then grew without bound
// (24 GB resident and a SIGKILL after four minutes, for a 4xf32 global).
// Only a store into a global takes the copy as `variable`; a read takes it
// as `*` (stage_crossings._staged_type). The memory limit turns a relapse
// into a quick failure rather than a machine out of memory.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ulimit -v 8000000 && mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged -o %t/staged.vmfb
// RUN: mdc-run --module=%t/staged.vmfb --function=read_b --device=local-task --device=local-sync | FileCheck %s --check-prefix=READ
// READ: 4xf32=1 1 1 1
// RUN: ulimit -v 8000000 && mdc-compile %s --device=a=local[0] --device=b=vulkan[0] -o %t/vulkan.vmfb
// The crossing at the stream level: a `*` copy on device_b, cloned there.
// RUN: mdc-compile %s --device=a=local[0] --device=b=local[1] --link=a:b=staged --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// IR-LABEL: util.func public @read_b(
// IR:       util.call @__mdc_stage_await(
// IR-NOT:   -> !stream.resource<variable>
// IR:       stream.async.clone on(#hal.device.affinity<@device_b>) %{{.+}} : !stream.resource<*>{{.+}} -> !stream.resource<*>
// IR:       util.return
util.global private mutable @s = dense<1.0> : tensor<4xf32>

func.func public @write_a(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %s = util.global.load @s : tensor<4xf32>
  %n = arith.mulf %s, %x : tensor<4xf32>
  util.global.store %n, @s : tensor<4xf32>
  return %n : tensor<4xf32>
}

func.func public @read_b() -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %s = util.global.load @s : tensor<4xf32>
  return %s : tensor<4xf32>
}
