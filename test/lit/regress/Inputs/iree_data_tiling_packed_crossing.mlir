// A constant weight that device_a holds (it has no affinity: IREE puts it on
// the default device) read by a matmul on device_b, the two devices local
// CPUs of different executable targets (llvm-cpu generic and vmvx), whose
// data-tiling resolvers pack a matmul operand in different layouts.
// regress/iree_data_tiling_packed_crossing.test.
util.global private @device_a = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
util.global private @device_b = #hal.device.target<"local", [#hal.executable.target<"vmvx", "vmvx-bytecode-fb", {iree.encoding.resolver = #iree_cpu.vmvx_encoding_resolver<>, ukernels = "none"}>]> : !hal.device

func.func @main(%x: tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@device_b>})
    -> (tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@device_b>}) {
  // w[k][j] = (8k + j - 32) / 16
  %w = arith.constant dense<[[-2.0000, -1.9375, -1.8750, -1.8125, -1.7500, -1.6875, -1.6250, -1.5625], [-1.5000, -1.4375, -1.3750, -1.3125, -1.2500, -1.1875, -1.1250, -1.0625], [-1.0000, -0.9375, -0.8750, -0.8125, -0.7500, -0.6875, -0.6250, -0.5625], [-0.5000, -0.4375, -0.3750, -0.3125, -0.2500, -0.1875, -0.1250, -0.0625], [0.0000, 0.0625, 0.1250, 0.1875, 0.2500, 0.3125, 0.3750, 0.4375], [0.5000, 0.5625, 0.6250, 0.6875, 0.7500, 0.8125, 0.8750, 0.9375], [1.0000, 1.0625, 1.1250, 1.1875, 1.2500, 1.3125, 1.3750, 1.4375], [1.5000, 1.5625, 1.6250, 1.6875, 1.7500, 1.8125, 1.8750, 1.9375]]> : tensor<8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
