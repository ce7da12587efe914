// A value bounces between devices inside scf.for.
func.func public @ping_pong(
    %x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %n: index
  ) -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<?xf32> {
    %d = tensor.dim %acc, %c0 : tensor<?xf32>
    %on_b = flow.tensor.transfer %acc : tensor<?xf32>{%d} to #hal.device.promise<@device_b>
    %two = arith.addf %on_b, %on_b : tensor<?xf32>
    %back = flow.tensor.transfer %two : tensor<?xf32>{%d} to #hal.device.promise<@device_a>
    %one = arith.constant 1.0 : f32
    %e = tensor.empty(%d) : tensor<?xf32>
    %ones = linalg.fill ins(%one : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    %next = arith.addf %back, %ones : tensor<?xf32>
    scf.yield %next : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
