// @step(x, w, s, pos) stores x + (w^5)[0, 0] * s into @acc at pos: a
// chain of four 384x384 matmuls comes before the one element that reads x,
// so the work that reads x is still queued when the call returns (IREE
// 3.13 records a global store's work in the global's timepoint and does
// not wait for it). Called with s = 0, @acc[pos] is x. @read returns @acc.
module {
  util.global private mutable @acc = dense<0.0> : tensor<8xf32>
  util.func public @step(%x: tensor<1xf32>, %w: tensor<384x384xf32>, %s: tensor<1xf32>, %pos: index) {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<384x384xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<384x384xf32>) -> tensor<384x384xf32>
    %m1 = linalg.matmul ins(%w, %w : tensor<384x384xf32>, tensor<384x384xf32>) outs(%f : tensor<384x384xf32>) -> tensor<384x384xf32>
    %m2 = linalg.matmul ins(%m1, %w : tensor<384x384xf32>, tensor<384x384xf32>) outs(%f : tensor<384x384xf32>) -> tensor<384x384xf32>
    %m3 = linalg.matmul ins(%m2, %w : tensor<384x384xf32>, tensor<384x384xf32>) outs(%f : tensor<384x384xf32>) -> tensor<384x384xf32>
    %m4 = linalg.matmul ins(%m3, %w : tensor<384x384xf32>, tensor<384x384xf32>) outs(%f : tensor<384x384xf32>) -> tensor<384x384xf32>
    %c = tensor.extract_slice %m4[0, 0] [1, 1] [1, 1] : tensor<384x384xf32> to tensor<1xf32>
    %e1 = tensor.empty() : tensor<1xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %c, %s : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) outs(%e1 : tensor<1xf32>) {
    ^bb0(%a: f32, %b: f32, %t: f32, %o: f32):
      %p = arith.mulf %b, %t : f32
      %q = arith.addf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<1xf32>
    %acc = util.global.load @acc : tensor<8xf32>
    %n = tensor.insert_slice %y into %acc[%pos] [1] [1] : tensor<1xf32> into tensor<8xf32>
    util.global.store %n, @acc : tensor<8xf32>
    util.return
  }
  util.func public @read() -> tensor<8xf32> {
    %acc = util.global.load @acc : tensor<8xf32>
    util.return %acc : tensor<8xf32>
  }
}
