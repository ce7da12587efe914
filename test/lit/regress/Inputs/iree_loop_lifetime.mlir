// Stock IREE 3.13.0 rejects a loop carrying a value to another device and
// back when the carried value's init and the loop's result have different
// lifetimes; see ../iree_loop_lifetime.test.
func.func public @init_computed_result_returned(
    %x: tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}, %n: index)
    -> (tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x2 = arith.addi %x, %x : tensor<4xi8>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x2) -> (tensor<4xi8>) {
    %ab = flow.tensor.transfer %acc : tensor<4xi8> to #hal.device.promise<@device_b>
    %s = arith.addi %ab, %ab : tensor<4xi8>
    %back = flow.tensor.transfer %s : tensor<4xi8> to #hal.device.promise<@device_a>
    scf.yield %back : tensor<4xi8>
  }
  return %r : tensor<4xi8>
}
