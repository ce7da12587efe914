// The other direction: the init is an argument, the result feeds an op.
func.func public @init_argument_result_used(
    %x: tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}, %n: index)
    -> (tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xi8>) {
    %ab = flow.tensor.transfer %acc : tensor<4xi8> to #hal.device.promise<@device_b>
    %s = arith.addi %ab, %ab : tensor<4xi8>
    %back = flow.tensor.transfer %s : tensor<4xi8> to #hal.device.promise<@device_a>
    scf.yield %back : tensor<4xi8>
  }
  %t = arith.addi %r, %r : tensor<4xi8>
  return %t : tensor<4xi8>
}
