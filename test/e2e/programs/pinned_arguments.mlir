// Two arguments given on the CPU (device_a): both go to the GPU (device_b),
// where they are added; the CPU also subtracts them where they are.
func.func public @pinned_arguments(
    %x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %y: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %xb = flow.tensor.transfer %x : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  %yb = flow.tensor.transfer %y : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  %sum = arith.addf %xb, %yb : tensor<?xf32>
  %difference = arith.subf %x, %y : tensor<?xf32>
  return %sum, %difference : tensor<?xf32>, tensor<?xf32>
}

// One result on the GPU: (x + y) * (x - y), the difference made on the CPU.
func.func public @pinned_product(
    %x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
    %y: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
  ) -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %difference = arith.subf %x, %y : tensor<?xf32>
  %xb = flow.tensor.transfer %x : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  %yb = flow.tensor.transfer %y : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  %db = flow.tensor.transfer %difference : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  %sum = arith.addf %xb, %yb : tensor<?xf32>
  %product = arith.mulf %sum, %db : tensor<?xf32>
  return %product : tensor<?xf32>
}
