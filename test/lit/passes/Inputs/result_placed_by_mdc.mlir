// placed_on_b: its result's dispatch reads two values on device_b and one
// on device_a, so IREE leaves it unplaced and place-unplaced-ops puts it on
// device_b. placed_on_a: two values on device_a and one on device_b, placed
// on device_a.
func.func public @placed_on_b(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %splat = "flow.tensor.splat"(%s) {stream.affinity = #hal.device.affinity<@device_b>} : (f32) -> tensor<4xf32>
  %copy = "flow.tensor.clone"(%x) {stream.affinity = #hal.device.affinity<@device_b>} : (tensor<4xf32>) -> tensor<4xf32>
  %on_a = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_a>
  %u = arith.addf %on_a, %splat : tensor<4xf32>
  %v = arith.subf %u, %copy : tensor<4xf32>
  return %v : tensor<4xf32>
}
func.func public @placed_on_a(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %splat = "flow.tensor.splat"(%s) {stream.affinity = #hal.device.affinity<@device_b>} : (f32) -> tensor<4xf32>
  %on_a = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_a>
  %sq = arith.mulf %x, %x : tensor<4xf32>
  %sq_a = flow.tensor.transfer %sq : tensor<4xf32> to #hal.device.promise<@device_a>
  %u = arith.addf %on_a, %splat : tensor<4xf32>
  %v = arith.subf %u, %sq_a : tensor<4xf32>
  return %v : tensor<4xf32>
}
