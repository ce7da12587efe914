// Computed on device_a, result declared on device_b (crossing shape 2).
func.func public @square_to_b(
    %x: tensor<8xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<8xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %sq = arith.muli %x, %x : tensor<8xi32>
  return %sq : tensor<8xi32>
}
