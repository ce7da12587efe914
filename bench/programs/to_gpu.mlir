// A value produced on the CPU device and consumed on the GPU: bytes in on
// device_a, out on device_b.
func.func public @to_gpu(
    %x: tensor<?xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<?xi8> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xi8>
  %y = flow.tensor.transfer %x : tensor<?xi8>{%n} to #hal.device.promise<@device_b>
  return %y : tensor<?xi8>
}
