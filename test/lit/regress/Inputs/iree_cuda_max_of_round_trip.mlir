// A value sent to another device and straight back, then combined with
// itself by a max: IREE folds the round trip into a clone and the max into
// its operand, and the cuda dispatch left over fails to translate.
func.func public @round_trip_max(
    %x: tensor<8xi32> {iree.abi.affinity = #hal.device.promise<@device_c>}
  ) -> (tensor<8xi32> {iree.abi.affinity = #hal.device.promise<@device_c>}) {
  %there = flow.tensor.transfer %x : tensor<8xi32> to #hal.device.promise<@device_d>
  %back = flow.tensor.transfer %there : tensor<8xi32> to #hal.device.promise<@device_c>
  %m = arith.maxsi %x, %back : tensor<8xi32>
  return %m : tensor<8xi32>
}
