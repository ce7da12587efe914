// A called function that stays a call (never inlined) moves its argument.
func.func private @offload_square(%v: tensor<5xi64>) -> tensor<5xi64> attributes {inlining_policy = #util.inline.never} {
  %on_b = flow.tensor.transfer %v : tensor<5xi64> to #hal.device.promise<@device_b>
  %sq = arith.muli %on_b, %on_b : tensor<5xi64>
  %back = flow.tensor.transfer %sq : tensor<5xi64> to #hal.device.promise<@device_a>
  return %back : tensor<5xi64>
}

func.func public @twice(
    %x: tensor<5xi64> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<5xi64> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %a = func.call @offload_square(%x) : (tensor<5xi64>) -> tensor<5xi64>
  %b = func.call @offload_square(%a) : (tensor<5xi64>) -> tensor<5xi64>
  return %b : tensor<5xi64>
}
