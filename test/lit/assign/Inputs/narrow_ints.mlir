// Unit 0 adds i8 tensors of 6 bytes (not whole 32-bit words), unit 1
// compares f32s into an i1 tensor.
func.func @main(%a: tensor<6xi8>, %x: tensor<6xf32>, %y: tensor<6xf32>) -> (tensor<6xi8>, tensor<6xi1>) {
  %s = arith.addi %a, %a : tensor<6xi8>
  %c = arith.cmpf olt, %x, %y : tensor<6xf32>
  return %s, %c : tensor<6xi8>, tensor<6xi1>
}
