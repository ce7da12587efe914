// As round_trip_result, and the value on device_b is returned there too,
// with a second value crossing c -> b beside it (two staging sites).
func.func public @round_trip_result_twice(%x: tensor<7xi32> {iree.abi.affinity = #hal.device.promise<@device_c>})
    -> (tensor<7xi32> {iree.abi.affinity = #hal.device.promise<@device_c>},
        tensor<7xi32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<7xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %y = arith.addi %x, %x : tensor<7xi32>
  %b = flow.tensor.transfer %y : tensor<7xi32> to #hal.device.promise<@device_b>
  %z = arith.muli %x, %y : tensor<7xi32>
  return %b, %b, %z : tensor<7xi32>, tensor<7xi32>, tensor<7xi32>
}
