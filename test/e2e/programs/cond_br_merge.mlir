// cf.cond_br: one edge passes a value made on device_b to the merge block,
// the other a value made on device_a; the merge block uses it on device_a.
func.func public @cond_br_merge(
    %x: tensor<6xi32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %offload: i1
  ) -> (tensor<6xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  cf.cond_br %offload, ^bb1, ^bb2
^bb1:
  %on_b = flow.tensor.transfer %x : tensor<6xi32> to #hal.device.promise<@device_b>
  %squared_b = arith.muli %on_b, %on_b : tensor<6xi32>
  cf.br ^bb3(%squared_b : tensor<6xi32>)
^bb2:
  %zero = arith.subi %x, %x : tensor<6xi32>
  %neg = arith.subi %zero, %x : tensor<6xi32>
  cf.br ^bb3(%neg : tensor<6xi32>)
^bb3(%v: tensor<6xi32>):
  %r = arith.muli %v, %x : tensor<6xi32>
  return %r : tensor<6xi32>
}
