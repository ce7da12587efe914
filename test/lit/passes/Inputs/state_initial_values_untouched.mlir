// Modules state-initial-values leaves as they are (state_initial_values.mlir).
// One zeroed cache, and an immutable global of its value.
module {
  util.global private mutable @k = dense<0.0> : tensor<8xf32>
  util.global private @z = dense<0.0> : tensor<8xf32>
  util.func public @read() -> tensor<8xf32> {
    %k = util.global.load @k : tensor<8xf32>
    util.return %k : tensor<8xf32>
  }
}

// -----

// Two zeroed caches of different types (IREE keeps their buffers apart),
// two of different values (-0.0 and 0.0), two immutable ones of one value,
// and two mutable globals of no initial value.
module {
  util.global private mutable @a = dense<0.0> : tensor<8xf32>
  util.global private mutable @b = dense<0> : tensor<8xi32>
  util.global private mutable @c = dense<0.0> : tensor<2x4xf32>
  util.global private mutable @d = dense<-0.0> : tensor<4xf32>
  util.global private mutable @e = dense<0.0> : tensor<4xf32>
  util.global private @f = dense<1.0> : tensor<4xf32>
  util.global private @g = dense<1.0> : tensor<4xf32>
  util.global private mutable @h : tensor<4xf32>
  util.global private mutable @i : tensor<4xf32>
}
