// The GPU half of compute_to_cpu.mlir alone, compiled by stock IREE for one
// GPU device: what the call costs without the transfer.
func.func public @compute_on_gpu(
    %x: tensor<?xi8> {iree.abi.affinity = #hal.device.promise<@device_b>}
  ) -> (tensor<?xi8> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xi8>
  %one = arith.constant 1 : i8
  %e = tensor.empty(%n) : tensor<?xi8>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xi8>) outs(%e : tensor<?xi8>) {
  ^bb0(%in: i8, %out: i8):
    %s = arith.addi %in, %one : i8
    linalg.yield %s : i8
  } -> tensor<?xi8>
  return %y : tensor<?xi8>
}
