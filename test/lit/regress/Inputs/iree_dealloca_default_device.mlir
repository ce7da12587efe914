// From the random program generator (test/e2e/progen.py), seed 20261202
// index 57: all the work on device_b, two loops, device_a declared first.
func.func public @p57(
    %arg0: tensor<5xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
    %arg1: index
  ) -> (tensor<1x5xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<5x1xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %v1_e = tensor.empty() : tensor<1x5xf32>
  %v1 = linalg.broadcast ins(%arg0 : tensor<5xf32>) outs(%v1_e : tensor<1x5xf32>) dimensions = [0]
  %v2_e = tensor.empty() : tensor<1x5xf32>
  %v2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v1 : tensor<1x5xf32>) outs(%v2_e : tensor<1x5xf32>) {
  ^bb0(%i0: f32, %o: f32):
    %s1 = arith.constant 2.000000e+00 : f32
    %s2 = arith.addf %i0, %s1 : f32
    linalg.yield %s2 : f32
  } -> tensor<1x5xf32>
  %v6 = scf.for %v6_iv = %c0 to %arg1 step %c1 iter_args(%acc3 = %v2) -> (tensor<1x5xf32>) {
    %v4_e = tensor.empty() : tensor<1x5xf32>
    %v4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc3, %v1 : tensor<1x5xf32>, tensor<1x5xf32>) outs(%v4_e : tensor<1x5xf32>) {
    ^bb0(%i0: f32, %i1: f32, %o: f32):
      %s1 = arith.constant -2.000000e+00 : f32
      %s2 = arith.constant 1.250000e+00 : f32
      %s3 = arith.addf %s1, %s2 : f32
      %s4 = arith.constant 1.625000e+00 : f32
      %s5 = arith.minimumf %i1, %s4 : f32
      %s6 = arith.addf %s3, %s5 : f32
      %s7 = arith.addf %s6, %i0 : f32
      linalg.yield %s7 : f32
    } -> tensor<1x5xf32>
    %v5 = arith.negf %v4 : tensor<1x5xf32>
    scf.yield %v5 : tensor<1x5xf32>
  }
  %v7_e = tensor.empty() : tensor<1x5xf32>
  %v7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v6 : tensor<1x5xf32>) outs(%v7_e : tensor<1x5xf32>) {
  ^bb0(%i0: f32, %o: f32):
    %s1 = arith.constant 1.000000e+00 : f32
    %s2 = arith.addf %i0, %s1 : f32
    linalg.yield %s2 : f32
  } -> tensor<1x5xf32>
  %v8_e = tensor.empty() : tensor<5x1xf32>
  %v8 = linalg.transpose ins(%v1 : tensor<1x5xf32>) outs(%v8_e : tensor<5x1xf32>) permutation = [1, 0]
  %v9_e = tensor.empty() : tensor<1x5xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v7 : tensor<1x5xf32>) outs(%v9_e : tensor<1x5xf32>) {
  ^bb0(%i0: f32, %o: f32):
    %s1 = arith.constant 1.250000e-01 : f32
    %s2 = arith.addf %i0, %s1 : f32
    linalg.yield %s2 : f32
  } -> tensor<1x5xf32>
  %v12_n = arith.constant 3 : index
  %v12 = scf.for %v12_iv = %c0 to %v12_n step %c1 iter_args(%acc10 = %v9) -> (tensor<1x5xf32>) {
    %v11 = math.tanh %acc10 : tensor<1x5xf32>
    scf.yield %v11 : tensor<1x5xf32>
  }
  %v13_e = tensor.empty() : tensor<1x5xf32>
  %v13 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v12 : tensor<1x5xf32>) outs(%v13_e : tensor<1x5xf32>) {
  ^bb0(%i0: f32, %o: f32):
    %s1 = arith.constant -2.500000e-01 : f32
    %s2 = arith.addf %i0, %s1 : f32
    linalg.yield %s2 : f32
  } -> tensor<1x5xf32>
  return %v13, %v8 : tensor<1x5xf32>, tensor<5x1xf32>
}
