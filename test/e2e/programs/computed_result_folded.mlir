// Results IREE computes as an argument of another device: a max-reduction
// over a unit dimension from i32's minimum is %x itself, and %y plus a
// filled 0 is %y, once IREE has canonicalized them (after mdc's input
// passes). Each crosses: device_a -> device_b and device_b -> device_a; the
// third result is computed on device_a from both and stays there.
func.func public @computed_result_folded(
    %x: tensor<2x5xi32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %y: tensor<6xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}
  ) -> (tensor<2x5xi32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<6xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<2x5xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 1, 5] : tensor<2x5xi32> into tensor<2x1x5xi32>
  %min = arith.constant -2147483648 : i32
  %empty = tensor.empty() : tensor<2x5xi32>
  %init = linalg.fill ins(%min : i32) outs(%empty : tensor<2x5xi32>) -> tensor<2x5xi32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                         iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%e : tensor<2x1x5xi32>) outs(%init : tensor<2x5xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %m = arith.maxsi %in, %acc : i32
    linalg.yield %m : i32
  } -> tensor<2x5xi32>
  %zero = arith.constant -0.0 : f32
  %fempty = tensor.empty() : tensor<6xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%fempty : tensor<6xf32>) -> tensor<6xf32>
  %same = arith.addf %y, %zeros : tensor<6xf32>
  %twice = arith.addi %x, %x : tensor<2x5xi32>
  return %max, %same, %twice : tensor<2x5xi32>, tensor<6xf32>, tensor<2x5xi32>
}
