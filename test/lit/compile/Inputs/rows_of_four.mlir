// A ?x4 tensor crossing to device_b and back. IREE collapses the
// elementwise work on device_b, so the value coming back moves as
// tensor<?xf32> of 4 * (rows) elements: the report must still show the
// program's tensor<?x4xf32>, with its one dynamic dimension named as on the
// way there.
func.func public @scale_rows(
    %x: tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<?x4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x4xf32>
  %on_b = flow.tensor.transfer %x : tensor<?x4xf32>{%rows} to #hal.device.promise<@device_b>
  %twice = arith.addf %on_b, %on_b : tensor<?x4xf32>
  %back = flow.tensor.transfer %twice : tensor<?x4xf32>{%rows} to #hal.device.promise<@device_a>
  %r = arith.mulf %back, %x : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
