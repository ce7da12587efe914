// A loop whose init is an argument and whose result is written into an
// output argument (iree.abi.output), its body moving the carried value to
// device_b and back.
func.func public @loop_into(%x: tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}, %n: index,
    %out: tensor<4xi8> {iree.abi.output = 0 : index, iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xi8>) {
    %ab = flow.tensor.transfer %acc : tensor<4xi8> to #hal.device.promise<@device_b>
    %s = arith.addi %ab, %ab : tensor<4xi8>
    %back = flow.tensor.transfer %s : tensor<4xi8> to #hal.device.promise<@device_a>
    scf.yield %back : tensor<4xi8>
  }
  return %r : tensor<4xi8>
}
