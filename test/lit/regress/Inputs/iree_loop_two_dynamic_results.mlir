// See ../iree_loop_two_dynamic_results.test: ids[i] = i and rows[i] = x + i
// for i < count, both built up by a loop.
util.func public @rows(%x: tensor<1x8xf32>, %count: i64) -> (tensor<?xi64>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.index_cast %count : i64 to index
  %out0 = tensor.empty(%n) : tensor<?xi64>
  %lo0 = tensor.empty(%n) : tensor<?x8xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%out = %out0, %lo = %lo0) -> (tensor<?xi64>, tensor<?x8xf32>) {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %t = tensor.from_elements %ii : tensor<1xi64>
    %out1 = tensor.insert_slice %t into %out[%i] [1] [1] : tensor<1xi64> into tensor<?xi64>
    %e = tensor.empty() : tensor<1x8xf32>
    %v1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %f : f32
      linalg.yield %s : f32
    } -> tensor<1x8xf32>
    %lo1 = tensor.insert_slice %v1 into %lo[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<?x8xf32>
    scf.yield %out1, %lo1 : tensor<?xi64>, tensor<?x8xf32>
  }
  util.return %r#0, %r#1 : tensor<?xi64>, tensor<?x8xf32>
}
