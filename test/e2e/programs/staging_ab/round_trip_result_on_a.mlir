// round_trip_result with device_a (the default device) in place of device_c.
func.func public @round_trip_result_on_a(%x: tensor<7xi32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<7xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = arith.addi %x, %x : tensor<7xi32>
  %b = flow.tensor.transfer %y : tensor<7xi32> to #hal.device.promise<@device_b>
  return %b : tensor<7xi32>
}
