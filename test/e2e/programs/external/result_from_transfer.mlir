// Shape: results with no annotation whose device comes from a transfer:
// the first is returned as `flow.tensor.transfer ... to @dev_b`, the second
// is computed on the default device.
// devices: dev_a dev_b
// call: results_moved
// inputs: 5xi32
func.func public @results_moved(%x: tensor<5xi32>) -> (tensor<5xi32>, tensor<5xi32>) {
  %d = arith.addi %x, %x : tensor<5xi32>
  %moved = flow.tensor.transfer %d : tensor<5xi32> to #hal.device.promise<@dev_b>
  %n = arith.muli %x, %d : tensor<5xi32>
  return %moved, %n : tensor<5xi32>, tensor<5xi32>
}
