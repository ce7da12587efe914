// Public results declared on no device (no iree.abi.affinity) that end on
// device_b: where they live is only known from the program (a move, the
// device of the op that makes them, mdc's placement). mdc-compile records
// it in the manifest ("result_devices") and gives the function a host twin
// where it has none, so mdc-run and load bring every result back.

// A constant placed only by its consumer's move.
util.func public @constant_on_b() -> tensor<4xf32> {
  %cst = arith.constant dense<[1.5, -2.0, 3.25, 4.0]> : tensor<4xf32>
  %t = flow.tensor.transfer %cst : tensor<4xf32> to #hal.device.promise<@device_b>
  util.return %t : tensor<4xf32>
}

// Computed on device_b from an argument moved there (a func.func).
func.func public @square_on_b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %s = arith.mulf %m, %m : tensor<4xf32>
  return %s : tensor<4xf32>
}

// Two results on different devices.
util.func public @two_devices(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32>, tensor<4xf32>) {
  %m = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %s = arith.mulf %m, %m : tensor<4xf32>
  %d = arith.addf %x, %x : tensor<4xf32>
  util.return %s, %d : tensor<4xf32>, tensor<4xf32>
}

// An op with operands on two devices, placed by mdc on device_b (it holds
// the most operand bytes).
util.func public @placed_on_b(%a: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                              %b: tensor<16xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 mod 4)>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%a, %b : tensor<4xf32>, tensor<16xf32>)
                       outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %z = arith.mulf %p, %q : f32
    linalg.yield %z : f32
  } -> tensor<16xf32>
  util.return %r : tensor<16xf32>
}

// The same result declared on device_b: its declaration says where it is.
util.func public @declared_on_b(%x: tensor<4xf32>)
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %m = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %s = arith.mulf %m, %m : tensor<4xf32>
  util.return %s : tensor<4xf32>
}
