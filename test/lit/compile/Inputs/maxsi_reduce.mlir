// A maxsi reduction from INT_MIN over the middle dimension of a dynamic
// shape (IREE 3.13's CUDA code gets it wrong), and the same reduction with
// addi (it does not), both on @device_b.
func.func @max_over_rows(%a: tensor<4x?x?xi32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4x?xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d1 = tensor.dim %a, %c1 : tensor<4x?x?xi32>
  %d2 = tensor.dim %a, %c2 : tensor<4x?x?xi32>
  %b = flow.tensor.transfer %a : tensor<4x?x?xi32>{%d1, %d2} to #hal.device.promise<@device_b>
  %min = arith.constant -2147483648 : i32
  %e = tensor.empty(%d2) : tensor<4x?xi32>
  %init = linalg.fill ins(%min : i32) outs(%e : tensor<4x?xi32>) -> tensor<4x?xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%b : tensor<4x?x?xi32>) outs(%init : tensor<4x?xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %m = arith.maxsi %in, %acc : i32
    linalg.yield %m : i32
  } -> tensor<4x?xi32>
  %back = flow.tensor.transfer %r : tensor<4x?xi32>{%d2} to #hal.device.promise<@device_a>
  return %back : tensor<4x?xi32>
}

func.func @sum_over_rows(%a: tensor<4x?x?xi32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4x?xi32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d1 = tensor.dim %a, %c1 : tensor<4x?x?xi32>
  %d2 = tensor.dim %a, %c2 : tensor<4x?x?xi32>
  %b = flow.tensor.transfer %a : tensor<4x?x?xi32>{%d1, %d2} to #hal.device.promise<@device_b>
  %zero = arith.constant 0 : i32
  %e = tensor.empty(%d2) : tensor<4x?xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<4x?xi32>) -> tensor<4x?xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%b : tensor<4x?x?xi32>) outs(%init : tensor<4x?xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %s = arith.addi %in, %acc : i32
    linalg.yield %s : i32
  } -> tensor<4x?xi32>
  %back = flow.tensor.transfer %r : tensor<4x?xi32>{%d2} to #hal.device.promise<@device_a>
  return %back : tensor<4x?xi32>
}
