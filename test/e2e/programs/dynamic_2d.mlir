// Dynamic dimensions crossing in both directions, f16 elements.
func.func public @dynamic_2d(
    %x: tensor<?x?xf16> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<?x?xf16> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf16>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf16>
  %on_b = flow.tensor.transfer %x : tensor<?x?xf16>{%d0, %d1} to #hal.device.promise<@device_b>
  %twice = arith.addf %on_b, %on_b : tensor<?x?xf16>
  %back = flow.tensor.transfer %twice : tensor<?x?xf16>{%d0, %d1} to #hal.device.promise<@device_a>
  %r = arith.mulf %back, %x : tensor<?x?xf16>
  return %r : tensor<?x?xf16>
}
