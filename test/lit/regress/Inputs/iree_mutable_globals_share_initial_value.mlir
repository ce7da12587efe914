// Three mutable globals of one initial value (zeros, as every KV cache
// starts), each updated in place at a position the caller gives, and an
// immutable global of the same value. @step(x0, x1, x2, pos) writes xi
// into @ki at pos; @read returns all four.
module {
  util.global private mutable @k0 = dense<0.0> : tensor<8xf32>
  util.global private mutable @k1 = dense<0.0> : tensor<8xf32>
  util.global private mutable @k2 = dense<0.0> : tensor<8xf32>
  util.global private @zeros = dense<0.0> : tensor<8xf32>
  util.func public @step(%x0: tensor<1xf32>, %x1: tensor<1xf32>, %x2: tensor<1xf32>, %pos: index) {
    %k0 = util.global.load @k0 : tensor<8xf32>
    %n0 = tensor.insert_slice %x0 into %k0[%pos] [1] [1] : tensor<1xf32> into tensor<8xf32>
    util.global.store %n0, @k0 : tensor<8xf32>
    %k1 = util.global.load @k1 : tensor<8xf32>
    %n1 = tensor.insert_slice %x1 into %k1[%pos] [1] [1] : tensor<1xf32> into tensor<8xf32>
    util.global.store %n1, @k1 : tensor<8xf32>
    %k2 = util.global.load @k2 : tensor<8xf32>
    %n2 = tensor.insert_slice %x2 into %k2[%pos] [1] [1] : tensor<1xf32> into tensor<8xf32>
    util.global.store %n2, @k2 : tensor<8xf32>
    util.return
  }
  util.func public @read() -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %k0 = util.global.load @k0 : tensor<8xf32>
    %k1 = util.global.load @k1 : tensor<8xf32>
    %k2 = util.global.load @k2 : tensor<8xf32>
    %z = util.global.load @zeros : tensor<8xf32>
    util.return %k0, %k1, %k2, %z : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
}
