// Shape: an iree-turbine export (torch dialect: IREE's torch input gives it
// the buffer-view ABI, @main and @main$async) that names no device, with the
// --device order's first device, the CPU the host twin @main$host takes and
// returns values on, sorting after the other one, IREE's default device:
// everything runs on dev_a, and dev_z carries only the twin's values.
// devices: dev_z dev_a
// call: main
// inputs: 4x3xf32
func.func @main(%arg0: !torch.vtensor<[4,3],f32>) -> !torch.vtensor<[4,2],f32> {
  %w = torch.vtensor.literal(dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
  %b = torch.vtensor.literal(dense<[0.125, -0.5]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %y = torch.aten.linear %arg0, %w, %b : !torch.vtensor<[4,3],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2],f32> -> !torch.vtensor<[4,2],f32>
  %r = torch.aten.relu %y : !torch.vtensor<[4,2],f32> -> !torch.vtensor<[4,2],f32>
  return %r : !torch.vtensor<[4,2],f32>
}
