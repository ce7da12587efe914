// plain-encoded-crossings: a value packed for a matmul (an
// #iree_encoding tensor) that moves from a CPU to a GPU is unpacked on the
// CPU, moved plain and packed again on the GPU, so that each device reads
// its own layout (IREE 3.13 hoists the packing of a constant onto the
// device that holds it). A plain value, a packed value moving between two
// devices of one target, and a packed value of a dynamic shape move as
// they are.
// RUN: mdc-opt %s --split-input-file --pass=plain-encoded-crossings | FileCheck %s

#cpu_target = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">
#gpu_target = #hal.executable.target<"vulkan-spirv", "vulkan-spirv-fb">
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#packed = #iree_encoding.encoding<operand_index = 2 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, [#map2, #map3]], iteration_sizes = [4, 32, 32, 16]>
module attributes {stream.affinity.default = #hal.device.affinity<@cpu>} {
  util.global private @cpu = #hal.device.target<"local", [#cpu_target]> : !hal.device
  util.global private @gpu = #hal.device.target<"vulkan", [#gpu_target]> : !hal.device
  util.global private @mask_on_gpu : !stream.resource<constant>
  // CHECK-LABEL: util.initializer
  // CHECK:       %[[PACKED:.+]] = stream.tensor.encode on(#hal.device.affinity<@cpu>) %{{.+}} : tensor<32x32xf32> in {{.+}} -> tensor<32x32xf32, #[[ENC:.+]]> in
  // CHECK:       %[[PLAIN_SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<32x32xf32> : index
  // CHECK:       %[[PLAIN:.+]] = stream.tensor.encode on(#hal.device.affinity<@cpu>) %[[PACKED]] : tensor<32x32xf32, #[[ENC]]> in !stream.resource<*>{%{{.+}}} -> tensor<32x32xf32> in !stream.resource<*>{%[[PLAIN_SIZE]]}
  // CHECK:       %[[MOVED:.+]] = stream.async.transfer %[[PLAIN]] : !stream.resource<*>{%[[PLAIN_SIZE]]} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>) !stream.resource<*>{%[[PLAIN_SIZE]]}
  // CHECK:       %[[GPU_SIZE:.+]] = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #[[ENC]]> : index
  // CHECK:       %[[REPACKED:.+]] = stream.tensor.encode on(#hal.device.affinity<@gpu>) %[[MOVED]] : tensor<32x32xf32> in !stream.resource<*>{%[[PLAIN_SIZE]]} -> tensor<32x32xf32, #[[ENC]]> in !stream.resource<*>{%[[GPU_SIZE]]}
  // CHECK:       %[[CONSTANT:.+]] = stream.async.clone on(#hal.device.affinity<@gpu>) %[[REPACKED]] : !stream.resource<*>{%[[GPU_SIZE]]} -> !stream.resource<constant>{%[[GPU_SIZE]]}
  // CHECK-NOT:   stream.async.transfer
  // CHECK:       util.global.store %[[CONSTANT]], @mask_on_gpu
  util.initializer {
    %cst = stream.tensor.constant on(#hal.device.affinity<@cpu>) : tensor<32x32xf32> in !stream.resource<constant> = dense<1.0> : tensor<32x32xf32>
    %size = stream.resource.size %cst : !stream.resource<constant>
    %any = stream.async.clone on(#hal.device.affinity<@cpu>) %cst : !stream.resource<constant>{%size} -> !stream.resource<*>{%size}
    %packed_size = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<32x32xf32, #packed> : index
    %packed = stream.tensor.encode on(#hal.device.affinity<@cpu>) %any : tensor<32x32xf32> in !stream.resource<*>{%size} -> tensor<32x32xf32, #packed> in !stream.resource<*>{%packed_size}
    %moved = stream.async.transfer %packed : !stream.resource<*>{%packed_size} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>) !stream.resource<constant>{%packed_size}
    util.global.store %moved, @mask_on_gpu : !stream.resource<constant>
    util.return
  }

  // A plain value moves as it is.
  // CHECK-LABEL: util.func public @plain(
  // CHECK-NOT:   stream.tensor.encode
  // CHECK:       stream.async.transfer %{{.+}} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>)
  util.func public @plain(%r: !stream.resource<*>, %n: index) -> !stream.resource<*> {
    %moved = stream.async.transfer %r : !stream.resource<*>{%n} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>) !stream.resource<*>{%n}
    util.return %moved : !stream.resource<*>
  }
}

// -----

// Two CPUs compiled alike pack alike: the packed value moves as it is.
#cpu_target = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#packed = #iree_encoding.encoding<operand_index = 2 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, [#map2, #map3]], iteration_sizes = [4, 32, 32, 16]>
module {
  util.global private @a = #hal.device.target<"local", [#cpu_target]> : !hal.device
  util.global private @b = #hal.device.target<"local", [#cpu_target]> : !hal.device
  // CHECK-LABEL: util.func public @same_target(
  // CHECK:       %[[PACKED:.+]] = stream.tensor.encode on(#hal.device.affinity<@a>)
  // CHECK-NEXT:  stream.async.transfer %[[PACKED]] {{.+}} from(#hal.device.affinity<@a>) -> to(#hal.device.affinity<@b>)
  // CHECK-NOT:   stream.tensor.encode
  util.func public @same_target(%r: !stream.resource<*>, %n: index) -> !stream.resource<*> {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@a>) tensor<32x32xf32, #packed> : index
    %packed = stream.tensor.encode on(#hal.device.affinity<@a>) %r : tensor<32x32xf32> in !stream.resource<*>{%n} -> tensor<32x32xf32, #packed> in !stream.resource<*>{%s}
    %moved = stream.async.transfer %packed : !stream.resource<*>{%s} from(#hal.device.affinity<@a>) -> to(#hal.device.affinity<@b>) !stream.resource<*>{%s}
    util.return %moved : !stream.resource<*>
  }
}

// -----

// A packed value of a dynamic shape moves as it is (the check then refuses
// it, and mdc-compile compiles without data tiling).
#cpu_target = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">
#gpu_target = #hal.executable.target<"vulkan-spirv", "vulkan-spirv-fb">
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#packed = #iree_encoding.encoding<operand_index = 2 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, [#map2, #map3]], iteration_sizes = [4, ?, 32, 16]>
module {
  util.global private @cpu = #hal.device.target<"local", [#cpu_target]> : !hal.device
  util.global private @gpu = #hal.device.target<"vulkan", [#gpu_target]> : !hal.device
  // CHECK-LABEL: util.func public @dynamic(
  // CHECK:       %[[PACKED:.+]] = stream.tensor.encode on(#hal.device.affinity<@cpu>)
  // CHECK-NEXT:  stream.async.transfer %[[PACKED]] {{.+}} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>)
  // CHECK-NOT:   stream.tensor.encode
  util.func public @dynamic(%r: !stream.resource<*>, %n: index, %d: index) -> !stream.resource<*> {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<?x32xf32, #packed>{%d} : index
    %packed = stream.tensor.encode on(#hal.device.affinity<@cpu>) %r : tensor<?x32xf32>{%d} in !stream.resource<*>{%n} -> tensor<?x32xf32, #packed>{%d} in !stream.resource<*>{%s}
    %moved = stream.async.transfer %packed : !stream.resource<*>{%s} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>) !stream.resource<*>{%s}
    util.return %moved : !stream.resource<*>
  }
}

// -----

// IREE leaves the target of a hoisted constant's move unnamed: the device
// of its readers (here a clone on @cpu of the global it is stored into)
// is where it is packed again.
#cpu_target = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">
#gpu_target = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#packed = #iree_encoding.encoding<operand_index = 2 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, [#map2, #map3]], iteration_sizes = [4, 32, 32, 16]>
module attributes {stream.affinity.default = #hal.device.affinity<@cpu>} {
  util.global private @cpu = #hal.device.target<"local", [#cpu_target]> : !hal.device
  util.global private @gpu = #hal.device.target<"cuda", [#gpu_target]> : !hal.device
  util.global private @mask : !stream.resource<constant>
  util.global private @mask_size : index
  // CHECK-LABEL: util.initializer
  // CHECK:       %[[PACKED:.+]] = stream.tensor.encode on(#hal.device.affinity<@gpu>) %{{.+}} : tensor<32x32xf32> in
  // CHECK:       %[[PLAIN:.+]] = stream.tensor.encode on(#hal.device.affinity<@gpu>) %[[PACKED]] : tensor<32x32xf32, #{{.+}}> in {{.+}} -> tensor<32x32xf32> in
  // CHECK:       %[[MOVED:.+]] = stream.async.transfer %[[PLAIN]] : {{.+}} from(#hal.device.affinity<@gpu>) -> to(#hal.device.affinity<@cpu>)
  // CHECK:       stream.tensor.encode on(#hal.device.affinity<@cpu>) %[[MOVED]] : tensor<32x32xf32> in
  util.initializer {
    %cst = stream.tensor.constant on(#hal.device.affinity<@gpu>) : tensor<32x32xf32> in !stream.resource<constant> = dense<1.0> : tensor<32x32xf32>
    %size = stream.resource.size %cst : !stream.resource<constant>
    %any = stream.async.clone on(#hal.device.affinity<@gpu>) %cst : !stream.resource<constant>{%size} -> !stream.resource<*>{%size}
    %packed_size = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #packed> : index
    %packed = stream.tensor.encode on(#hal.device.affinity<@gpu>) %any : tensor<32x32xf32> in !stream.resource<*>{%size} -> tensor<32x32xf32, #packed> in !stream.resource<*>{%packed_size}
    %moved = stream.async.transfer %packed : !stream.resource<*>{%packed_size} from(#hal.device.affinity<@gpu>) -> !stream.resource<constant>{%packed_size}
    util.global.store %moved, @mask : !stream.resource<constant>
    util.global.store %packed_size, @mask_size : index
    util.return
  }
  util.func public @read() -> !stream.resource<*> {
    %mask = util.global.load immutable @mask : !stream.resource<constant>
    %size = util.global.load immutable @mask_size : index
    %on_cpu = stream.async.clone on(#hal.device.affinity<@cpu>) %mask : !stream.resource<constant>{%size} -> !stream.resource<*>{%size}
    util.return %on_cpu : !stream.resource<*>
  }
}
