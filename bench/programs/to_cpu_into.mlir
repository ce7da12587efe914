// A value produced on the GPU device and consumed on the CPU device, written
// into storage the caller gives (iree.abi.output): bytes in on device_b, out
// on device_a.
func.func public @to_cpu_into(
    %x: tensor<?xi8> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %out: tensor<?xi8> {iree.abi.output = 0 : index, iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<?xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xi8>
  %y = flow.tensor.transfer %x : tensor<?xi8>{%n} to #hal.device.promise<@device_a>
  return %y : tensor<?xi8>
}
