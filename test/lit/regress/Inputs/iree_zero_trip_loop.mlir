// A loop that may run zero times, carrying a value between devices; see
// ../iree_zero_trip_loop.test.
func.func public @p193(
    %arg0: tensor<2x?x5xi32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %arg1: tensor<2x?x5xi32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %arg2: index
  ) -> (tensor<2x?x5xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %arg0, %c1 : tensor<2x?x5xi32>
  %d2 = tensor.dim %arg1, %c1 : tensor<2x?x5xi32>
  %v3 = flow.tensor.transfer %arg1 : tensor<2x?x5xi32>{%d2} to #hal.device.promise<@device_b>
  %v4 = arith.addi %arg0, %arg0 : tensor<2x?x5xi32>
  %v6 = flow.tensor.transfer %v4 : tensor<2x?x5xi32>{%d1} to #hal.device.promise<@device_a>
  %v15 = scf.for %v15_iv = %c0 to %arg2 step %c1 iter_args(%acc8 = %v3) -> (tensor<2x?x5xi32>) {
    %v9 = flow.tensor.transfer %acc8 : tensor<2x?x5xi32>{%d2} to #hal.device.promise<@device_a>
    %v10 = arith.addi %v9, %v6 : tensor<2x?x5xi32>
    %v12 = flow.tensor.transfer %v3 : tensor<2x?x5xi32>{%d2} to #hal.device.promise<@device_a>
    %v13_e = tensor.empty(%d2) : tensor<2x?x5xi32>
    %v13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v10, %v12 : tensor<2x?x5xi32>, tensor<2x?x5xi32>) outs(%v13_e : tensor<2x?x5xi32>) {
    ^bb0(%i0: i32, %i1: i32, %o: i32):
      %s1 = arith.xori %i0, %i1 : i32
      %s2 = arith.addi %s1, %i1 : i32
      linalg.yield %s2 : i32
    } -> tensor<2x?x5xi32>
    %v14 = flow.tensor.transfer %v13 : tensor<2x?x5xi32>{%d2} to #hal.device.promise<@device_b>
    scf.yield %v14 : tensor<2x?x5xi32>
  }
  %v17 = flow.tensor.transfer %v15 : tensor<2x?x5xi32>{%d2} to #hal.device.promise<@device_a>
  %v18 = arith.addi %v6, %v17 : tensor<2x?x5xi32>
  return %v18 : tensor<2x?x5xi32>
}
