// A two-stage program as a split model runs it: a CPU stage on device_a
// (a matmul with a weight of its own and a tanh), a crossing, a GPU stage
// on device_b (a second matmul and an add), and the result crossing back
// to the CPU. What pipelined calls (runtime_shim/pipelined.py) overlap:
// the CPU stage of one call with the GPU stage of another.
util.global private @w_a = dense<0.015625> : tensor<128x128xf32>
util.global private @w_b = dense<-0.0078125> : tensor<128x128xf32>

func.func public @stages(%x: tensor<64x128xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<64x128xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x128xf32>) -> tensor<64x128xf32>
  %wa = util.global.load @w_a : tensor<128x128xf32>
  %h = linalg.matmul ins(%x, %wa : tensor<64x128xf32>, tensor<128x128xf32>) outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>
  %t = math.tanh %h : tensor<64x128xf32>
  %t_b = flow.tensor.transfer %t : tensor<64x128xf32> to #hal.device.promise<@device_b>
  %wb = util.global.load @w_b : tensor<128x128xf32>
  %wb_b = flow.tensor.transfer %wb : tensor<128x128xf32> to #hal.device.promise<@device_b>
  %empty_b = flow.tensor.transfer %acc : tensor<64x128xf32> to #hal.device.promise<@device_b>
  %g = linalg.matmul ins(%t_b, %wb_b : tensor<64x128xf32>, tensor<128x128xf32>) outs(%empty_b : tensor<64x128xf32>) -> tensor<64x128xf32>
  %y = arith.addf %g, %t_b : tensor<64x128xf32>
  %back = flow.tensor.transfer %y : tensor<64x128xf32> to #hal.device.promise<@device_a>
  return %back : tensor<64x128xf32>
}
