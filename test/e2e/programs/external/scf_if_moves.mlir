// Shape: an scf.if whose then-branch moves the value to the other device,
// computes there and moves it back, while the else-branch stays; devices
// named so that the alphabetical order (dev_accel first) is not the
// --device order (dev_host first). Arguments annotated on @dev_host.
// devices: dev_host dev_accel
// call: maybe_offload
// inputs: 6xf32 i1
func.func public @maybe_offload(
    %x: tensor<6xf32> {iree.abi.affinity = #hal.device.promise<@dev_host>}, %c: i1
  ) -> (tensor<6xf32> {iree.abi.affinity = #hal.device.promise<@dev_host>}) {
  %r = scf.if %c -> tensor<6xf32> {
    %on = flow.tensor.transfer %x : tensor<6xf32> to #hal.device.promise<@dev_accel>
    %sq = arith.mulf %on, %on : tensor<6xf32>
    %back = flow.tensor.transfer %sq : tensor<6xf32> to #hal.device.promise<@dev_host>
    scf.yield %back : tensor<6xf32>
  } else {
    %neg = arith.negf %x : tensor<6xf32>
    scf.yield %neg : tensor<6xf32>
  }
  %out = arith.addf %r, %x : tensor<6xf32>
  return %out : tensor<6xf32>
}
