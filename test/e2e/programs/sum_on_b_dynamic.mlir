// sum_on_b.mlir with the size known at run time only: a value small at run
// time is read in place by device_b (passes/lowering/small_in_place.py),
// whose reads nothing but the site's next write waits for; a large one is
// copied into device_b's memory, the host waiting for the copy.
func.func @sum_on_b(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                    %n: index) -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %empty = tensor.empty(%d) : tensor<?xf32>
  %ones = linalg.fill ins(%one : f32) outs(%empty : tensor<?xf32>) -> tensor<?xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<?xf32>) -> tensor<?xf32>
  %acc0 = flow.tensor.transfer %zeros : tensor<?xf32>{%d} to #hal.device.promise<@device_b>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%v = %x, %acc = %acc0) -> (tensor<?xf32>, tensor<?xf32>) {
    %v1 = arith.addf %v, %ones : tensor<?xf32>
    %vb = flow.tensor.transfer %v1 : tensor<?xf32>{%d} to #hal.device.promise<@device_b>
    %acc1 = arith.addf %acc, %vb : tensor<?xf32>
    scf.yield %v1, %acc1 : tensor<?xf32>, tensor<?xf32>
  }
  %back = flow.tensor.transfer %r#1 : tensor<?xf32>{%d} to #hal.device.promise<@device_a>
  return %back : tensor<?xf32>
}
