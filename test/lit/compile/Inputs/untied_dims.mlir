// Public functions with dynamic argument dimensions the program does not
// certainly require equal (manifest_tied_dims.test).

// Not tied: each argument is used with itself only.
func.func @independent(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = arith.addf %a, %a : tensor<?xf32>
  %1 = arith.mulf %b, %b : tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}

// Not tied: the sum runs only when %p holds, so a call may give two sizes.
func.func @conditional(%p: i1, %a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = scf.if %p -> tensor<?xf32> {
    %s = arith.addf %a, %b : tensor<?xf32>
    scf.yield %s : tensor<?xf32>
  } else {
    scf.yield %a : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// Not listed: the dynamic size must be 4, which the shim does not check
// as a tie.
func.func @fixed(%a: tensor<4xf32>, %b: tensor<?xf32>) -> tensor<4xf32> {
  %c = tensor.cast %b : tensor<?xf32> to tensor<4xf32>
  %s = arith.addf %a, %c : tensor<4xf32>
  return %s : tensor<4xf32>
}
