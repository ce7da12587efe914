// One elementwise op written twice, once per device: flow deduplicates the
// two dispatches into one executable that runs on both devices.
func.func public @on_cpu(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = math.exp %x : tensor<?xf32>
  return %y : tensor<?xf32>
}
func.func public @on_gpu(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %y = math.exp %x : tensor<?xf32>
  return %y : tensor<?xf32>
}
// A crossing, so that mdc stages and the staged CPU pair runs something.
func.func public @there_and_back(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %xb = flow.tensor.transfer %x : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  %yb = math.exp %xb : tensor<?xf32>
  %ya = flow.tensor.transfer %yb : tensor<?xf32>{%n} to #hal.device.promise<@device_a>
  %z = math.exp %ya : tensor<?xf32>
  return %z : tensor<?xf32>
}
