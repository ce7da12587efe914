// A value made on device_b (a GPU in use; a second CPU in tests) returned on
// the CPU, device_a, into storage the caller gives (iree.abi.output).
func.func public @square_into(
    %x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %out: tensor<?xf32> {iree.abi.output = 0 : index, iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %square = arith.mulf %x, %x : tensor<?xf32>
  %back = flow.tensor.transfer %square : tensor<?xf32>{%n} to #hal.device.promise<@device_a>
  return %back : tensor<?xf32>
}
