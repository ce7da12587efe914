// Rule executable-format: IREE 3.13.0 creates an executable dispatched on
// devices of different targets from one variant, on a device that cannot
// run that variant's format.
// Refused: the CPU creates the executable from its CUDA variant. Accepted:
// each device creates it from the variant of its own format.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1 >/dev/null; echo "rc=$?") | %no-traceback | FileCheck %s
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; true) | FileCheck %s --check-prefix=OUT
// OUT-NOT: @cpu_loads_cuda_variant
// OUT: @each_its_own_variant
// OUT-NOT: @cpu_loads_cuda_variant

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  hal.executable private @ex {
    hal.executable.binary public @elf <format = "embedded-elf-x86_64", data = dense<0> : vector<4xi8>>
    hal.executable.binary public @ptx <format = "cuda-nvptx-fb", data = dense<0> : vector<4xi8>>
  }
  util.func public @cpu_loads_cuda_variant() {
    %any = arith.constant -1 : i64
    %a = util.global.load immutable @device_a : !hal.device
    // CHECK: executable-format.mlir:[[# @LINE + 1]]:12: error: 'hal.executable.create' on device_a loads variant @ex::@ptx of format cuda-nvptx-fb, which device_a cannot run
    %exe = hal.executable.create device(%a : !hal.device) affinity(%any) target(@ex::@ptx) : !hal.executable
    // CHECK-NEXT: note: device_a runs: embedded-elf-x86_64
    util.return
  }
}
// CHECK-NOT: error:
// CHECK-NOT: more violation
// CHECK: rc=1

// -----

module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  hal.executable private @ex {
    hal.executable.binary public @elf <format = "embedded-elf-x86_64", data = dense<0> : vector<4xi8>>
    hal.executable.binary public @ptx <format = "cuda-nvptx-fb", data = dense<0> : vector<4xi8>>
  }
  util.func public @each_its_own_variant() {
    %any = arith.constant -1 : i64
    %a = util.global.load immutable @device_a : !hal.device
    %b = util.global.load immutable @device_b : !hal.device
    %on_a = hal.executable.create device(%a : !hal.device) affinity(%any) target(@ex::@elf) : !hal.executable
    %on_b = hal.executable.create device(%b : !hal.device) affinity(%any) target(@ex::@ptx) : !hal.executable
    util.return
  }
}
