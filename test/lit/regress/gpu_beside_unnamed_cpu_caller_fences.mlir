// Regression, found in the twenty-ninth session and fixed in the thirtieth:
// the tiny Llama export compiled with --device=gpu=vulkan[0]
// --device=host=local[0] --no-host-entry-points. The program never names
// the host, so IREE drops its global and nothing is staged; host-fences
// left the caller's fences to IREE, which hands the wait fence to the
// Vulkan queue, and mdc's verifier refused the module (caller-fence: the
// manifest lists both devices, so the caller's fence may be the CPU's).
// host-fences now also awaits the caller's fences on the host when a GPU
// the module declares sits beside a command-line device of another driver.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mdc-compile %s --device=gpu=vulkan[0] --device=host=local[0] --no-host-entry-points --iree-execution-model=async-external --compile-to=stream -o - | FileCheck %s
// CHECK-LABEL: util.func public @square(
// CHECK:       util.call @__mdc_host_await(%arg1)
// RUN: mdc-compile %s --device=gpu=vulkan[0] --device=host=local[0] --no-host-entry-points --iree-execution-model=async-external -o %t/m.vmfb
// RUN: test -s %t/m.vmfb
// Only the GPU: nothing another driver's, IREE's fences as they were.
// RUN: mdc-compile %s --device=gpu=vulkan[0] --iree-execution-model=async-external --compile-to=stream -o - | FileCheck %s --check-prefix=ALONE
// ALONE-LABEL: util.func public @square(
// ALONE-NOT:   __mdc_host_await

func.func public @square(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.mulf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
