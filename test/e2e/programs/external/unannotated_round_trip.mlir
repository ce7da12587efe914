// Shape: a func.func public with two unannotated arguments and an
// unannotated result; one argument goes to @dev_b, is combined there with
// the other, and comes back for the last step.
// devices: dev_a dev_b
// call: round_trip
// inputs: 8xf32 8xf32
func.func public @round_trip(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %xb = flow.tensor.transfer %x : tensor<8xf32> to #hal.device.promise<@dev_b>
  %yb = flow.tensor.transfer %y : tensor<8xf32> to #hal.device.promise<@dev_b>
  %s = arith.addf %xb, %yb : tensor<8xf32>
  %p = arith.mulf %s, %xb : tensor<8xf32>
  %back = flow.tensor.transfer %p : tensor<8xf32> to #hal.device.promise<@dev_a>
  %r = arith.subf %back, %y : tensor<8xf32>
  return %r : tensor<8xf32>
}
