// place-encoded-sizes: a sizeof of a data-tiled (#iree_encoding) tensor
// type with no affinity gets the device of the placed ops that read it,
// cloned for each where ops on two devices read it; a sizeof of a plain
// type, one with an affinity, and one nothing placed reads stay as they
// are.
// RUN: mdc-opt %s --pass=place-encoded-sizes | FileCheck %s

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#packed = #iree_encoding.encoding<operand_index = 0 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, #map2], iteration_sizes = [4, 32, 32, 16]>
module {
  util.global private @cpu : !hal.device
  util.global private @gpu : !hal.device
  // CHECK-LABEL: util.func public @sizes(
  // CHECK:       %[[CPU_SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<4x32x16xf32, #{{.+}}> : index
  // CHECK-NEXT:  %[[GPU_SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<4x32x16xf32, #{{.+}}> : index
  // CHECK-NEXT:  %[[PLAIN:.+]] = stream.tensor.sizeof tensor<4x32x16xf32> : index
  // CHECK-NEXT:  %[[HAS:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<4x32x16xf32, #{{.+}}> : index
  // CHECK-NEXT:  %[[UNREAD:.+]] = stream.tensor.sizeof tensor<4x32x16xf32, #{{.+}}> : index
  // CHECK-NEXT:  stream.async.clone on(#hal.device.affinity<@cpu>) %{{.+}} : !stream.resource<*>{%[[CPU_SIZE]]} -> !stream.resource<*>{%[[CPU_SIZE]]}
  // CHECK-NEXT:  stream.async.clone on(#hal.device.affinity<@gpu>) %{{.+}} : !stream.resource<*>{%[[GPU_SIZE]]} -> !stream.resource<*>{%[[GPU_SIZE]]}
  // CHECK-NEXT:  stream.async.clone on(#hal.device.affinity<@cpu>) %{{.+}} : !stream.resource<*>{%[[PLAIN]]} -> !stream.resource<*>{%[[PLAIN]]}
  // CHECK-NEXT:  stream.async.clone on(#hal.device.affinity<@cpu>) %{{.+}} : !stream.resource<*>{%[[HAS]]} -> !stream.resource<*>{%[[HAS]]}
  util.func public @sizes(%r: !stream.resource<*>) -> (!stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, index) {
    %packed = stream.tensor.sizeof tensor<4x32x16xf32, #packed> : index
    %plain = stream.tensor.sizeof tensor<4x32x16xf32> : index
    %has = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<4x32x16xf32, #packed> : index
    %unread = stream.tensor.sizeof tensor<4x32x16xf32, #packed> : index
    %a = stream.async.clone on(#hal.device.affinity<@cpu>) %r : !stream.resource<*>{%packed} -> !stream.resource<*>{%packed}
    %b = stream.async.clone on(#hal.device.affinity<@gpu>) %r : !stream.resource<*>{%packed} -> !stream.resource<*>{%packed}
    %c = stream.async.clone on(#hal.device.affinity<@cpu>) %r : !stream.resource<*>{%plain} -> !stream.resource<*>{%plain}
    %d = stream.async.clone on(#hal.device.affinity<@cpu>) %r : !stream.resource<*>{%has} -> !stream.resource<*>{%has}
    util.return %a, %b, %c, %d, %unread : !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, !stream.resource<*>, index
  }
}
