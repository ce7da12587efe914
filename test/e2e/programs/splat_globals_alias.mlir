// Two mutable globals with the same initial value, each updated in place
// (tensor.insert_slice into its loaded value) by @fill; @peek reads both.
// IREE 3.13 gives them one storage: after @fill both read back @b's
// update (test_iree_global_aliasing.py).
module @alias {
  util.global private mutable @a = dense<0.0> : tensor<8xf32>
  util.global private mutable @b = dense<0.0> : tensor<8xf32>
  func.func @fill(%x: tensor<4xf32>, %y: tensor<4xf32>) {
    %a = util.global.load @a : tensor<8xf32>
    %a2 = tensor.insert_slice %x into %a[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
    util.global.store %a2, @a : tensor<8xf32>
    %b = util.global.load @b : tensor<8xf32>
    %b2 = tensor.insert_slice %y into %b[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
    util.global.store %b2, @b : tensor<8xf32>
    return
  }
  func.func @peek() -> (tensor<8xf32>, tensor<8xf32>) {
    %a = util.global.load @a : tensor<8xf32>
    %b = util.global.load @b : tensor<8xf32>
    return %a, %b : tensor<8xf32>, tensor<8xf32>
  }
}
