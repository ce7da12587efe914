// scf.while: halve on device_b until the first element drops below a bound.
func.func public @halve_until(
    %x: tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %bound: f32
  ) -> (tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %r = scf.while (%v = %x) : (tensor<3xf32>) -> tensor<3xf32> {
    %first = tensor.extract %v[%c0] : tensor<3xf32>
    %go = arith.cmpf ogt, %first, %bound : f32
    scf.condition(%go) %v : tensor<3xf32>
  } do {
  ^bb0(%w: tensor<3xf32>):
    %on_b = flow.tensor.transfer %w : tensor<3xf32> to #hal.device.promise<@device_b>
    %half = arith.constant dense<0.5> : tensor<3xf32>
    %h = arith.mulf %on_b, %half : tensor<3xf32>
    %back = flow.tensor.transfer %h : tensor<3xf32> to #hal.device.promise<@device_a>
    scf.yield %back : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
