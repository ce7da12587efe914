// Shape: the program declares its device globals without a value
// (util.global private @device_b : !hal.device) and leaves their targets to
// --device; the argument and the result are promised to @device_a, and the
// argument fans out to @device_b and @device_c by flow.tensor.transfer to a
// promise. Broke once: mdc gave such a module a default device, and IREE
// then no longer defined the globals from --device ("references a promised
// device that was not declared").
// devices: device_a device_b device_c
// call: fanout
// inputs: 4x5xf32
util.global private @device_a : !hal.device
util.global private @device_b : !hal.device
util.global private @device_c : !hal.device
func.func public @fanout(
    %x: tensor<4x5xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<4x5xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %xb = flow.tensor.transfer %x : tensor<4x5xf32> to #hal.device.promise<@device_b>
  %xc = flow.tensor.transfer %x : tensor<4x5xf32> to #hal.device.promise<@device_c>
  %b = arith.mulf %xb, %xb : tensor<4x5xf32>
  %c = math.absf %xc : tensor<4x5xf32>
  %bb = flow.tensor.transfer %b : tensor<4x5xf32> to #hal.device.promise<@device_a>
  %cb = flow.tensor.transfer %c : tensor<4x5xf32> to #hal.device.promise<@device_a>
  %r = arith.subf %bb, %cb : tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
