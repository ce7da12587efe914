// A small value (16 x f32) computed on the CPU in every iteration of a loop
// and summed on device_b, which never sends anything back inside the loop:
// device_b copies each iteration's value out of its pinned site without the
// host waiting for it, so the CPU's next write into that site must wait for
// the copy first (passes/lowering/small_in_place.py).
func.func @sum_on_b(%x: tensor<16xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                    %n: index) -> (tensor<16xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ones = arith.constant dense<1.0> : tensor<16xf32>
  %zeros = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = flow.tensor.transfer %zeros : tensor<16xf32> to #hal.device.promise<@device_b>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%v = %x, %acc = %acc0) -> (tensor<16xf32>, tensor<16xf32>) {
    %v1 = arith.addf %v, %ones : tensor<16xf32>
    %vb = flow.tensor.transfer %v1 : tensor<16xf32> to #hal.device.promise<@device_b>
    %acc1 = arith.addf %acc, %vb : tensor<16xf32>
    scf.yield %v1, %acc1 : tensor<16xf32>, tensor<16xf32>
  }
  %back = flow.tensor.transfer %r#1 : tensor<16xf32> to #hal.device.promise<@device_a>
  return %back : tensor<16xf32>
}
