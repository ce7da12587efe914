// Modules generate-entry-point leaves as they are (generate_entry_point.mlir).
// No @decode.
util.func public @prefill(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}

// -----

// Neither, but a function of the same shape.
util.func public @main(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}

// -----

// A token of two ids.
util.func public @prefill(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}
util.func public @decode(%token: tensor<1x2xi64>, %position: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}

// -----

// Ids of two types (i64 ids, i32 position).
util.func public @prefill(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}
util.func public @decode(%token: tensor<1x1xi64>, %position: tensor<1xi32>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}

// -----

// A prompt of dynamic length.
util.func public @prefill(%ids: tensor<1x?xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}
util.func public @decode(%token: tensor<1x1xi64>, %position: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}

// -----

// Two vocabularies.
util.func public @prefill(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}
util.func public @decode(%token: tensor<1x1xi64>, %position: tensor<1xi64>) -> tensor<1x9xf32> {
  %z = arith.constant dense<0.0> : tensor<1x9xf32>
  util.return %z : tensor<1x9xf32>
}

// -----

// Integer logits, and f32 ids.
util.func public @prefill(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xi32> {
  %z = arith.constant dense<0> : tensor<1x8xi32>
  util.return %z : tensor<1x8xi32>
}
util.func public @decode(%token: tensor<1x1xf32>, %position: tensor<1xf32>) -> tensor<1x8xi32> {
  %z = arith.constant dense<0> : tensor<1x8xi32>
  util.return %z : tensor<1x8xi32>
}

// -----

// A private @decode: mdc.generate calls public functions.
util.func public @prefill(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}
util.func private @decode(%token: tensor<1x1xi64>, %position: tensor<1xi64>) -> tensor<1x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x8xf32>
  util.return %z : tensor<1x8xf32>
}
