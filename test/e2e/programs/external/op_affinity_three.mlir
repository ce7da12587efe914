// Shape: three devices chosen by `stream.affinity` on individual ops, not
// by transfers into them: a flow.tensor.splat and a flow.tensor.clone on
// @dev_z, a never-inlined util.func whose ops all run on @dev_y; nothing is
// annotated, and the values cross to @dev_x implicitly except for one
// transfer.
// devices: dev_x dev_y dev_z
// call: op_affinity
// inputs: 4xf32 f32
util.func private @square_on_y(%x: tensor<4xf32>) -> tensor<4xf32> attributes {
    inlining_policy = #util.inline.never, stream.affinity = #hal.device.affinity<@dev_y>} {
  %y = arith.mulf %x, %x : tensor<4xf32>
  util.return %y : tensor<4xf32>
}
func.func public @op_affinity(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %splat = "flow.tensor.splat"(%s) {stream.affinity = #hal.device.affinity<@dev_z>} : (f32) -> tensor<4xf32>
  %copy = "flow.tensor.clone"(%x) {stream.affinity = #hal.device.affinity<@dev_z>} : (tensor<4xf32>) -> tensor<4xf32>
  %sq = util.call @square_on_y(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %sq_x = flow.tensor.transfer %sq : tensor<4xf32> to #hal.device.promise<@dev_x>
  %u = arith.addf %sq_x, %splat : tensor<4xf32>
  %v = arith.subf %u, %copy : tensor<4xf32>
  return %v : tensor<4xf32>
}
