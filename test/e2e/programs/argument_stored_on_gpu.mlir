// An argument on the GPU stored into a mutable global and read back later
// on the CPU. The shim gives the memory it placed an argument in back
// through the GPU's queue once the call is done, or once a placed input is
// released (runtime_shim/cuda_free.py): that is right only while IREE
// copies an argument it stores, so the global never holds the argument's
// own memory (gpu_kit's argument_given_back case).
util.global private mutable @stored = dense<0.0> : tensor<65536xf32>

func.func public @keep(%x: tensor<65536xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  util.global.store %x, @stored : tensor<65536xf32>
  return
}

func.func public @kept() -> (tensor<65536xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %k = util.global.load @stored : tensor<65536xf32>
  %on_a = flow.tensor.transfer %k : tensor<65536xf32> to #hal.device.promise<@device_a>
  return %on_a : tensor<65536xf32>
}

// Both in one call, for the reference: what @kept reads after @keep(%x).
func.func public @keep_then_read(%x: tensor<65536xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<65536xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  call @keep(%x) : (tensor<65536xf32>) -> ()
  %r = call @kept() : () -> tensor<65536xf32>
  return %r : tensor<65536xf32>
}
