// Shape: the program declares its devices itself (util.global private
// @dev = #hal.device.alias<...>) instead of leaving them to --device; the
// harness rewrites the kind and ordinal of each declaration for the device
// set under test and gives mdc-compile the matching --device flags. Nothing
// is annotated.
// devices: dev_cpu dev_gpu
// declared: dev_cpu dev_gpu
// call: declared
// inputs: 4xf32
util.global private @dev_cpu = #hal.device.alias<"local"[0]> : !hal.device
util.global private @dev_gpu = #hal.device.alias<"local"[1]> : !hal.device
func.func public @declared(%x: tensor<4xf32>) -> tensor<4xf32> {
  %on_gpu = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.affinity<@dev_gpu>
  %sq = arith.mulf %on_gpu, %on_gpu : tensor<4xf32>
  %back = flow.tensor.transfer %sq : tensor<4xf32> to #hal.device.affinity<@dev_cpu>
  %r = arith.addf %back, %x : tensor<4xf32>
  return %r : tensor<4xf32>
}
