// iree_loop_output_argument.mlir without the output argument (its loop
// body on device_c, a CPU sharing device_a's memory), and with a second
// result on device_b, a GPU: stock IREE compiles it, and a result-storage
// twin (a result on the CPU, a value on the GPU) would turn it into that
// program.
func.func public @loop(%x: tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}, %n: index)
    -> (tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xi8> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xi8>) {
    %ab = flow.tensor.transfer %acc : tensor<4xi8> to #hal.device.promise<@device_c>
    %s = arith.addi %ab, %ab : tensor<4xi8>
    %back = flow.tensor.transfer %s : tensor<4xi8> to #hal.device.promise<@device_a>
    scf.yield %back : tensor<4xi8>
  }
  %xb = flow.tensor.transfer %x : tensor<4xi8> to #hal.device.promise<@device_b>
  return %r, %xb : tensor<4xi8>, tensor<4xi8>
}
