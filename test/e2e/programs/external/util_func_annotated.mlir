// Shape: a util.func public (not func.func) whose arguments and result carry
// iree.abi.affinity; the value crosses to @dev_b and back by transfers.
// devices: dev_a dev_b
// call: util_annotated
// inputs: 4xf32 4xf32
util.func public @util_annotated(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@dev_a>},
    %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@dev_b>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@dev_a>}) {
  %xb = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@dev_b>
  %p = arith.mulf %xb, %y : tensor<4xf32>
  %pa = flow.tensor.transfer %p : tensor<4xf32> to #hal.device.promise<@dev_a>
  %r = arith.addf %pa, %x : tensor<4xf32>
  util.return %r : tensor<4xf32>
}
