// The seed program (examples/multi_device_mul.mlir) with its size known at
// run time only: a small CPU -> GPU crossing whose size the compiler cannot
// see, read in place when it is small at run time
// (passes/lowering/small_in_place.py).
func.func public @multi_device_mul(
    %input: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %input, %c0 : tensor<?xf32>
  %on_a = arith.mulf %input, %input : tensor<?xf32>
  %moved = flow.tensor.transfer %on_a : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  %on_b = arith.addf %moved, %moved : tensor<?xf32>
  %back = flow.tensor.transfer %on_b : tensor<?xf32>{%n} to #hal.device.promise<@device_a>
  return %back : tensor<?xf32>
}
