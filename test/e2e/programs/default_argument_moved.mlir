// %y is declared without an affinity (the caller gives it on device_a, the
// default device), moved to device_b and also used on device_a; the sum on
// device_b comes back to device_a. IREE imports %y on both devices.
func.func public @default_argument_moved(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %y: tensor<4xf32>
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<4xf32>) {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  %1 = flow.tensor.transfer %y : tensor<4xf32> to #hal.device.promise<@device_b>
  %2 = arith.addf %0, %1 : tensor<4xf32>
  %3 = flow.tensor.transfer %2 : tensor<4xf32> to #hal.device.promise<@device_a>
  %4 = arith.addf %3, %y : tensor<4xf32>
  return %2, %4 : tensor<4xf32>, tensor<4xf32>
}
