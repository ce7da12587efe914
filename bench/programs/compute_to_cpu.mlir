// A value computed on the GPU device (x + 1, bytewise) and returned on the
// CPU: the transfer of a GPU producer's result, which mdc writes into pinned
// memory within the producer's own submission.
func.func public @compute_to_cpu(
    %x: tensor<?xi8> {iree.abi.affinity = #hal.device.promise<@device_b>}
  ) -> (tensor<?xi8> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xi8>
  %one = arith.constant 1 : i8
  %e = tensor.empty(%n) : tensor<?xi8>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xi8>) outs(%e : tensor<?xi8>) {
  ^bb0(%in: i8, %out: i8):
    %s = arith.addi %in, %one : i8
    linalg.yield %s : i8
  } -> tensor<?xi8>
  %ya = flow.tensor.transfer %y : tensor<?xi8>{%n} to #hal.device.promise<@device_a>
  return %ya : tensor<?xi8>
}
