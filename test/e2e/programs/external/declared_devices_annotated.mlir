// Shape: program-declared devices (#hal.device.alias globals) with the
// argument annotated on @dev_gpu and the result on @dev_cpu, as a program
// written for a fixed machine would.
// devices: dev_cpu dev_gpu
// declared: dev_cpu dev_gpu
// call: declared_annotated
// inputs: 2x3xf32
util.global private @dev_cpu = #hal.device.alias<"local"[0]> : !hal.device
util.global private @dev_gpu = #hal.device.alias<"local"[1]> : !hal.device
func.func public @declared_annotated(
    %x: tensor<2x3xf32> {iree.abi.affinity = #hal.device.affinity<@dev_gpu>}
  ) -> (tensor<2x3xf32> {iree.abi.affinity = #hal.device.affinity<@dev_cpu>}) {
  %d = arith.addf %x, %x : tensor<2x3xf32>
  %back = flow.tensor.transfer %d : tensor<2x3xf32> to #hal.device.affinity<@dev_cpu>
  %r = arith.mulf %back, %back : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
