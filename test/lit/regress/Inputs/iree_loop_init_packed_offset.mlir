// Found by the random program generator (test/e2e/progen.py, seed 796020279
// index 73, minimised); see ../iree_loop_init_packed_offset.test.
func.func public @loop_from_packed_value(
    %arg0: tensor<?x3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %arg1: tensor<3x?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %arg3: index
  ) -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<?x?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %arg0, %c0 : tensor<?x3xf32>
  %d2 = tensor.dim %arg1, %c1 : tensor<3x?xf32>
  %v3_z = arith.constant 0.000000e+00 : f32
  %v3_e = tensor.empty(%d1, %d2) : tensor<?x?xf32>
  %v3_f = linalg.fill ins(%v3_z : f32) outs(%v3_e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %v3 = linalg.matmul ins(%arg0, %arg1 : tensor<?x3xf32>, tensor<3x?xf32>) outs(%v3_f : tensor<?x?xf32>) -> tensor<?x?xf32>
  %v10 = arith.negf %v3 : tensor<?x?xf32>
  %v11_z = arith.constant 0x7F800000 : f32
  %v11_e = tensor.empty(%d1) : tensor<?xf32>
  %v11_f = linalg.fill ins(%v11_z : f32) outs(%v11_e : tensor<?xf32>) -> tensor<?xf32>
  %v11 = linalg.reduce ins(%v3 : tensor<?x?xf32>) outs(%v11_f : tensor<?xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s1 = arith.minimumf %in, %acc : f32
      linalg.yield %s1 : f32
    }
  %v20 = scf.for %v20_iv = %c0 to %arg3 step %c1 iter_args(%acc15 = %v11) -> (tensor<?xf32>) {
    %d16 = tensor.dim %acc15, %c0 : tensor<?xf32>
    %v17 = flow.tensor.transfer %acc15 : tensor<?xf32>{%d16} to #hal.device.promise<@device_c>
    %v18_e = tensor.empty(%d16) : tensor<?xf32>
    %v18 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v17 : tensor<?xf32>) outs(%v18_e : tensor<?xf32>) {
    ^bb0(%i0: f32, %o: f32):
      %s1 = arith.addf %i0, %i0 : f32
      %s2 = arith.constant -1.375000e+00 : f32
      %s3 = arith.mulf %s1, %s2 : f32
      linalg.yield %s3 : f32
    } -> tensor<?xf32>
    %v19 = flow.tensor.transfer %v18 : tensor<?xf32>{%d16} to #hal.device.promise<@device_b>
    scf.yield %v19 : tensor<?xf32>
  }
  %v21 = arith.negf %v20 : tensor<?xf32>
  return %v21, %v10 : tensor<?xf32>, tensor<?x?xf32>
}
