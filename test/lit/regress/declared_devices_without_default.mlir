// Fixed (declared_devices_default.py). The program declares its devices
// itself, so IREE sets no default device: it imports %x, declared on no
// device, on each device that reads it (dev_cpu and dev_gpu), and mdc,
// whose rule for such an argument is "the default device", had none to
// import it on. mdc's verifier rejected the staged pair:
//   error: 'hal.device.queue.execute.indirect' on dev_cpu (local) uses a
//   device-local buffer allocated by dev_gpu (local), memory dev_cpu
//   cannot access
// mdc now gives such a program IREE's default device (the name that sorts
// first, dev_cpu; declared second here, so not the first declared), where
// the argument is imported and moved from to dev_gpu.
// Stock IREE (all-local) prints the result checked below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=dev_gpu=local[1] --device=dev_cpu=local[0] --link=dev_cpu:dev_gpu=staged --compile-to=mdc -o - | FileCheck %s --check-prefix=IR
// RUN: mdc-compile %s --device=dev_gpu=local[1] --device=dev_cpu=local[0] --link=dev_cpu:dev_gpu=staged -o %t/cg.vmfb
// RUN: iree-run-module --module=%t/cg.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 | FileCheck %s
// RUN: mdc-compile %s --device=dev_gpu=local[1] --device=dev_cpu=local[0] --link=dev_gpu:dev_cpu=staged -o %t/gc.vmfb
// RUN: iree-run-module --module=%t/gc.vmfb --device=local-task --device=local-sync --input=4xf32=1,2,3,4 | FileCheck %s
// CHECK: 4xf32=2 6 12 20

// IR: module attributes {{{.*}}stream.affinity.default = #hal.device.affinity<@dev_cpu>
// IR-LABEL: util.func public @declared(
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@dev_gpu>) %arg0
// IR: stream.tensor.import on(#hal.device.affinity<@dev_cpu>) %arg0
// IR-NOT: stream.tensor.import on(#hal.device.affinity<@dev_gpu>) %arg0
// IR: util.return

util.global private @dev_gpu = #hal.device.alias<"local"[1]> : !hal.device
util.global private @dev_cpu = #hal.device.alias<"local"[0]> : !hal.device
func.func public @declared(%x: tensor<4xf32>) -> tensor<4xf32> {
  %on_gpu = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.affinity<@dev_gpu>
  %sq = arith.mulf %on_gpu, %on_gpu : tensor<4xf32>
  %back = flow.tensor.transfer %sq : tensor<4xf32> to #hal.device.affinity<@dev_cpu>
  %r = arith.addf %back, %x : tensor<4xf32>
  return %r : tensor<4xf32>
}
