// A transfer inside one branch of scf.if.
func.func public @maybe_offload(
    %x: tensor<6xi32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %offload: i1
  ) -> (tensor<6xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %r = scf.if %offload -> tensor<6xi32> {
    %on_b = flow.tensor.transfer %x : tensor<6xi32> to #hal.device.promise<@device_b>
    %cubed_b = arith.muli %on_b, %on_b : tensor<6xi32>
    %back = flow.tensor.transfer %cubed_b : tensor<6xi32> to #hal.device.promise<@device_a>
    scf.yield %back : tensor<6xi32>
  } else {
    %neg = arith.subi %x, %x : tensor<6xi32>
    %neg2 = arith.subi %neg, %x : tensor<6xi32>
    scf.yield %neg2 : tensor<6xi32>
  }
  return %r : tensor<6xi32>
}
