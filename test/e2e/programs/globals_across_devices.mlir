// Globals stored on one device and used on the other, in each direction:
// @s is kept on device_a (scaled there by @write_a) and returned on device_b
// by @read_both; @t is updated on device_b from @s and read on device_a; @acc
// is carried through a loop on device_b and returned doubled on device_a.
util.global private mutable @s = dense<1.0> : tensor<4xf32>
util.global private mutable @t = dense<2.0> : tensor<4xf32>
util.global private mutable @acc = dense<0.5> : tensor<8xf32>

func.func public @write_a(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %s = util.global.load @s : tensor<4xf32>
  %n = arith.mulf %s, %x : tensor<4xf32>
  util.global.store %n, @s : tensor<4xf32>
  %t = util.global.load @t : tensor<4xf32>
  %t_b = flow.tensor.transfer %t : tensor<4xf32> to #hal.device.promise<@device_b>
  %n_b = flow.tensor.transfer %n : tensor<4xf32> to #hal.device.promise<@device_b>
  %u = arith.addf %t_b, %n_b : tensor<4xf32>
  util.global.store %u, @t : tensor<4xf32>
  return %u : tensor<4xf32>
}

func.func public @read_both() -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                                  tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %s = util.global.load @s : tensor<4xf32>
  %t = util.global.load @t : tensor<4xf32>
  return %t, %s : tensor<4xf32>, tensor<4xf32>
}

func.func public @run(%x: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %n: index)
    -> (tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = util.global.load @acc : tensor<8xf32>
  %a_b = flow.tensor.transfer %a : tensor<8xf32> to #hal.device.promise<@device_b>
  %x_b = flow.tensor.transfer %x : tensor<8xf32> to #hal.device.promise<@device_b>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %a_b) -> tensor<8xf32> {
    %w = arith.addf %v, %x_b : tensor<8xf32>
    scf.yield %w : tensor<8xf32>
  }
  util.global.store %r, @acc : tensor<8xf32>
  %r_a = flow.tensor.transfer %r : tensor<8xf32> to #hal.device.promise<@device_a>
  %d = arith.addf %r_a, %r_a : tensor<8xf32>
  return %d : tensor<8xf32>
}
