// Shape: three devices given in reverse alphabetical order
// (--device=dev_c, dev_b, dev_a); the annotated argument and result are on
// @dev_c, the value visits @dev_a then @dev_b.
// devices: dev_c dev_b dev_a
// call: reverse_chain
// inputs: 3x2xi32
func.func public @reverse_chain(
    %x: tensor<3x2xi32> {iree.abi.affinity = #hal.device.promise<@dev_c>}
  ) -> (tensor<3x2xi32> {iree.abi.affinity = #hal.device.promise<@dev_c>}) {
  %xa = flow.tensor.transfer %x : tensor<3x2xi32> to #hal.device.promise<@dev_a>
  %t = arith.addi %xa, %xa : tensor<3x2xi32>
  %tb = flow.tensor.transfer %t : tensor<3x2xi32> to #hal.device.promise<@dev_b>
  %u = arith.muli %tb, %tb : tensor<3x2xi32>
  %back = flow.tensor.transfer %u : tensor<3x2xi32> to #hal.device.promise<@dev_c>
  %r = arith.subi %back, %x : tensor<3x2xi32>
  return %r : tensor<3x2xi32>
}
