// Shape: an async function (`iree.abi.model = "coarse-fences"`: the caller
// passes a wait fence and a signal fence) with its arguments on two devices
// and its result on @dev_a.
// devices: dev_a dev_b
// call: fenced
// inputs: 4xf32 4xf32
func.func public @fenced(
    %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@dev_a>},
    %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@dev_b>}
  ) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@dev_a>})
    attributes {iree.abi.model = "coarse-fences"} {
  %xb = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@dev_b>
  %s = arith.subf %xb, %y : tensor<4xf32>
  %sa = flow.tensor.transfer %s : tensor<4xf32> to #hal.device.promise<@dev_a>
  %r = arith.mulf %sa, %x : tensor<4xf32>
  return %r : tensor<4xf32>
}
