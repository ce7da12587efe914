// A program that defines its devices itself, both local; IREE keeps these
// definitions over --iree-hal-target-device flags (affinities, not promises).
util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
util.global private @device_b = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
func.func public @f(%input: tensor<4xf32> {iree.abi.affinity = #hal.device.affinity<@device_a>}) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.affinity<@device_a>}) {
  %moved = flow.tensor.transfer %input : tensor<4xf32> to #hal.device.affinity<@device_b>
  %s = arith.constant dense<[4.0, 5.0, 6.0, 7.0]> : tensor<4xf32>
  %on_b = arith.mulf %moved, %s : tensor<4xf32>
  %back = flow.tensor.transfer %on_b : tensor<4xf32> to #hal.device.affinity<@device_a>
  return %back : tensor<4xf32>
}
