// iree_loop_two_dynamic_results.mlir with each carried tensor a buffer of
// its own at the loop's start and back edge (export, barrier on the buffer
// view, import), as mdc's generate-entry-point writes its loop.
util.func public @rows(%x: tensor<1x8xf32>, %count: i64) -> (tensor<?xi64>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.index_cast %count : i64 to index
  %out0e = tensor.empty(%n) : tensor<?xi64>
  %lo0e = tensor.empty(%n) : tensor<?x8xf32>
  %ob = hal.tensor.export %out0e : tensor<?xi64>{%n} -> !hal.buffer_view
  %obb = util.optimization_barrier %ob : !hal.buffer_view
  %out0 = hal.tensor.import %obb : !hal.buffer_view -> tensor<?xi64>{%n}
  %lb = hal.tensor.export %lo0e : tensor<?x8xf32>{%n} -> !hal.buffer_view
  %lbb = util.optimization_barrier %lb : !hal.buffer_view
  %lo0 = hal.tensor.import %lbb : !hal.buffer_view -> tensor<?x8xf32>{%n}
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
    %ob1 = hal.tensor.export %out1 : tensor<?xi64>{%n} -> !hal.buffer_view
    %obb1 = util.optimization_barrier %ob1 : !hal.buffer_view
    %out2 = hal.tensor.import %obb1 : !hal.buffer_view -> tensor<?xi64>{%n}
    %lb1 = hal.tensor.export %lo1 : tensor<?x8xf32>{%n} -> !hal.buffer_view
    %lbb1 = util.optimization_barrier %lb1 : !hal.buffer_view
    %lo2 = hal.tensor.import %lbb1 : !hal.buffer_view -> tensor<?x8xf32>{%n}
    scf.yield %out2, %lo2 : tensor<?xi64>, tensor<?x8xf32>
  }
  util.return %r#0, %r#1 : tensor<?xi64>, tensor<?x8xf32>
}
