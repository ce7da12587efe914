// Shape: three devices, argument and result annotated on @dev_x, no
// flow.tensor.transfer at all: a flow.tensor.clone pinned to @dev_y by its
// `stream.affinity` and a never-inlined util.func pinned to @dev_z by its
// own; every crossing is implied by where the ops run.
// devices: dev_x dev_y dev_z
// call: affinity_only
// inputs: 2x4xi32
util.func private @double_on_z(%x: tensor<2x4xi32>) -> tensor<2x4xi32> attributes {
    inlining_policy = #util.inline.never, stream.affinity = #hal.device.affinity<@dev_z>} {
  %y = arith.addi %x, %x : tensor<2x4xi32>
  util.return %y : tensor<2x4xi32>
}
func.func public @affinity_only(
    %x: tensor<2x4xi32> {iree.abi.affinity = #hal.device.promise<@dev_x>}
  ) -> (tensor<2x4xi32> {iree.abi.affinity = #hal.device.promise<@dev_x>}) {
  %on_y = "flow.tensor.clone"(%x) {stream.affinity = #hal.device.affinity<@dev_y>} : (tensor<2x4xi32>) -> tensor<2x4xi32>
  %d = util.call @double_on_z(%on_y) : (tensor<2x4xi32>) -> tensor<2x4xi32>
  %r = arith.muli %d, %x : tensor<2x4xi32>
  return %r : tensor<2x4xi32>
}
