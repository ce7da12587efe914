// Public functions whose argument dimensions the program requires equal
// (manifest_tied_dims.test).

// Tied: an elementwise op over both arguments.
func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %b : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// Tied: the contracted dimension of a matmul (a's columns, b's rows),
// and nothing else (the result is sized from a's rows and b's columns).
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %empty = tensor.empty(%m, %n) : tensor<?x?xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func private @sum(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %s = arith.addf %a, %b : tensor<?xf32>
  return %s : tensor<?xf32>
}

// Tied through a call: arguments 0 and 2 (the callee ties its own two).
func.func @through_call(%x: tensor<?xf32>, %y: tensor<?xf32>, %z: tensor<?xf32>) -> tensor<?xf32> {
  %r = call @sum(%z, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
