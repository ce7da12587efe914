// scf.while: the before region moves the value to device_b and halves it
// there, and scf.condition forwards the device_b value to the do region
// and the loop's result.
func.func public @halve_before(
    %x: tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %bound: f32
  ) -> (tensor<3xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %r = scf.while (%v = %x) : (tensor<3xf32>) -> tensor<3xf32> {
    %on_b = flow.tensor.transfer %v : tensor<3xf32> to #hal.device.promise<@device_b>
    %half = arith.constant dense<0.5> : tensor<3xf32>
    %h = arith.mulf %on_b, %half : tensor<3xf32>
    %first = tensor.extract %h[%c0] : tensor<3xf32>
    %go = arith.cmpf ogt, %first, %bound : f32
    scf.condition(%go) %h : tensor<3xf32>
  } do {
  ^bb0(%w: tensor<3xf32>):
    %one = arith.constant dense<1.0> : tensor<3xf32>
    %next = arith.addf %w, %one : tensor<3xf32>
    scf.yield %next : tensor<3xf32>
  }
  %twice = arith.addf %r, %r : tensor<3xf32>
  return %twice : tensor<3xf32>
}
