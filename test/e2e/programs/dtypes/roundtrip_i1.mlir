// A i1 tensor goes device_a -> device_b, is combined with itself there, and comes back.
func.func public @roundtrip(
    %x: tensor<2x3xi1> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<2x3xi1> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %on_b = flow.tensor.transfer %x : tensor<2x3xi1> to #hal.device.promise<@device_b>
  %ones = arith.constant dense<true> : tensor<2x3xi1>
  %on_b_not = arith.xori %on_b, %ones : tensor<2x3xi1>
  %mixed = arith.ori %on_b_not, %on_b : tensor<2x3xi1>
  %r = arith.xori %mixed, %on_b : tensor<2x3xi1>
  %back = flow.tensor.transfer %r : tensor<2x3xi1> to #hal.device.promise<@device_a>
  return %back : tensor<2x3xi1>
}
