// A value computed on device_c, moved to device_b and returned as it is, as
// a result declared on device_c: it crosses c -> b in the body and b -> c at
// the return (random programs, seed 20261201 index 247, result 3).
func.func public @round_trip_result(%x: tensor<7xi32> {iree.abi.affinity = #hal.device.promise<@device_c>})
    -> (tensor<7xi32> {iree.abi.affinity = #hal.device.promise<@device_c>}) {
  %y = arith.addi %x, %x : tensor<7xi32>
  %b = flow.tensor.transfer %y : tensor<7xi32> to #hal.device.promise<@device_b>
  return %b : tensor<7xi32>
}
