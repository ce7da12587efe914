// forward-plain-encodings: on a device whose executable targets have no
// encoding resolver (cuda here), an encode op copies its source, so it is
// dropped, and the globals that then hold the same bytes (one weight
// packed for @prefill's M and for @decode's) become one, which stores the
// weight itself (here the move that brought it) rather than a copy. A CPU's encodes
// (its target names a resolver) stay, and so do both of its globals.
// RUN: mdc-opt %s --split-input-file --pass=forward-plain-encodings | FileCheck %s

#cpu_target = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>}>
#gpu_target = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#prefill = #iree_encoding.encoding<operand_index = 1 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, #map2], iteration_sizes = [1, 128, 32, 32]>
#decode = #iree_encoding.encoding<operand_index = 1 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, #map2], iteration_sizes = [1, 1, 32, 32]>
// CHECK-LABEL: module @weights
// CHECK:       util.global private @gpu_prefill : !stream.resource<constant>
// CHECK-NOT:   util.global private @gpu_decode
// CHECK:       util.global private @cpu_prefill : !stream.resource<constant>
// CHECK:       util.global private @cpu_decode : !stream.resource<constant>
// CHECK-LABEL: util.initializer
// CHECK:       %[[WEIGHT:.+]] = stream.async.transfer %{{.+}} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>)
// CHECK-NOT:   stream.tensor.encode on(#hal.device.affinity<@gpu>)
// CHECK:       stream.tensor.encode on(#hal.device.affinity<@cpu>)
// CHECK:       stream.tensor.encode on(#hal.device.affinity<@cpu>)
// CHECK-NOT:   stream.tensor.encode on(#hal.device.affinity<@gpu>)
// CHECK:       util.global.store %[[WEIGHT]], @gpu_prefill
// CHECK-NOT:   @gpu_decode
// CHECK:       util.global.store %{{.+}}, @cpu_prefill
// CHECK:       util.global.store %{{.+}}, @cpu_decode
// CHECK-LABEL: util.func public @decode(
// CHECK:       util.global.load immutable @gpu_prefill
// CHECK:       util.global.load immutable @cpu_decode
module @weights {
  util.global private @cpu = #hal.device.target<"local", [#cpu_target]> : !hal.device
  util.global private @gpu = #hal.device.target<"cuda", [#gpu_target]> : !hal.device
  util.global private @gpu_prefill : !stream.resource<constant>
  util.global private @gpu_decode : !stream.resource<constant>
  util.global private @cpu_prefill : !stream.resource<constant>
  util.global private @cpu_decode : !stream.resource<constant>
  stream.executable private @mm {
    stream.executable.export public @mm workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @mm(%in: !stream.binding, %out: !stream.binding) {
        return
      }
    }
  }
  util.initializer {
    %h = stream.tensor.constant on(#hal.device.affinity<@cpu>) : tensor<32x32xf32> in !stream.resource<constant> = dense<1.0> : tensor<32x32xf32>
    %gn = stream.resource.size %h : !stream.resource<constant>
    %g = stream.async.transfer %h : !stream.resource<constant>{%gn} from(#hal.device.affinity<@cpu>) -> to(#hal.device.affinity<@gpu>) !stream.resource<constant>{%gn}
    %ga = stream.async.clone on(#hal.device.affinity<@gpu>) %g : !stream.resource<constant>{%gn} -> !stream.resource<*>{%gn}
    %gps = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #prefill> : index
    %gp = stream.tensor.encode on(#hal.device.affinity<@gpu>) %ga : tensor<32x32xf32> in !stream.resource<*>{%gn} -> tensor<32x32xf32, #prefill> in !stream.resource<*>{%gps}
    %gpc = stream.async.clone on(#hal.device.affinity<@gpu>) %gp : !stream.resource<*>{%gps} -> !stream.resource<constant>{%gps}
    %gb = stream.async.clone on(#hal.device.affinity<@gpu>) %g : !stream.resource<constant>{%gn} -> !stream.resource<*>{%gn}
    %gds = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #decode> : index
    %gd = stream.tensor.encode on(#hal.device.affinity<@gpu>) %gb : tensor<32x32xf32> in !stream.resource<*>{%gn} -> tensor<32x32xf32, #decode> in !stream.resource<*>{%gds}
    %gdc = stream.async.clone on(#hal.device.affinity<@gpu>) %gd : !stream.resource<*>{%gds} -> !stream.resource<constant>{%gds}
    %c = stream.tensor.constant on(#hal.device.affinity<@cpu>) : tensor<32x32xf32> in !stream.resource<constant> = dense<2.0> : tensor<32x32xf32>
    %cn = stream.resource.size %c : !stream.resource<constant>
    %ca = stream.async.clone on(#hal.device.affinity<@cpu>) %c : !stream.resource<constant>{%cn} -> !stream.resource<*>{%cn}
    %cps = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<32x32xf32, #prefill> : index
    %cp = stream.tensor.encode on(#hal.device.affinity<@cpu>) %ca : tensor<32x32xf32> in !stream.resource<*>{%cn} -> tensor<32x32xf32, #prefill> in !stream.resource<*>{%cps}
    %cpc = stream.async.clone on(#hal.device.affinity<@cpu>) %cp : !stream.resource<*>{%cps} -> !stream.resource<constant>{%cps}
    %cb = stream.async.clone on(#hal.device.affinity<@cpu>) %c : !stream.resource<constant>{%cn} -> !stream.resource<*>{%cn}
    %cds = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<32x32xf32, #decode> : index
    %cd = stream.tensor.encode on(#hal.device.affinity<@cpu>) %cb : tensor<32x32xf32> in !stream.resource<*>{%cn} -> tensor<32x32xf32, #decode> in !stream.resource<*>{%cds}
    %cdc = stream.async.clone on(#hal.device.affinity<@cpu>) %cd : !stream.resource<*>{%cds} -> !stream.resource<constant>{%cds}
    util.global.store %gpc, @gpu_prefill : !stream.resource<constant>
    util.global.store %gdc, @gpu_decode : !stream.resource<constant>
    util.global.store %cpc, @cpu_prefill : !stream.resource<constant>
    util.global.store %cdc, @cpu_decode : !stream.resource<constant>
    util.return
  }
  util.func public @decode(%x: !stream.resource<*>, %n: index) -> (!stream.resource<*>, !stream.resource<*>) {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #decode> : index
    %w = util.global.load immutable @gpu_decode : !stream.resource<constant>
    %wa = stream.async.clone on(#hal.device.affinity<@gpu>) %w : !stream.resource<constant>{%s} -> !stream.resource<*>{%s}
    %y = stream.tensor.dispatch on(#hal.device.affinity<@gpu>) @mm::@mm(%x, %wa) : (tensor<1x32xf32> in !stream.resource<*>{%n}, tensor<32x32xf32, #decode> in !stream.resource<*>{%s}) -> tensor<1x32xf32> in !stream.resource<*>{%n}
    %cs = stream.tensor.sizeof on(#hal.device.affinity<@cpu>) tensor<32x32xf32, #decode> : index
    %v = util.global.load immutable @cpu_decode : !stream.resource<constant>
    %va = stream.async.clone on(#hal.device.affinity<@cpu>) %v : !stream.resource<constant>{%cs} -> !stream.resource<*>{%cs}
    %z = stream.tensor.dispatch on(#hal.device.affinity<@cpu>) @mm::@mm(%x, %va) : (tensor<1x32xf32> in !stream.resource<*>{%n}, tensor<32x32xf32, #decode> in !stream.resource<*>{%cs}) -> tensor<1x32xf32> in !stream.resource<*>{%n}
    util.return %y, %z : !stream.resource<*>, !stream.resource<*>
  }
}

// -----

// Bytes that may be read elsewhere keep their encode: moved to the CPU
// (which reads them in its own layout), or returned to a caller. Without a
// dropped encode no global is merged.
#cpu_target = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>}>
#gpu_target = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#packed = #iree_encoding.encoding<operand_index = 1 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, #map2], iteration_sizes = [1, 128, 32, 32]>
// CHECK-LABEL: module @read_elsewhere
// CHECK-LABEL: util.func public @moved(
// CHECK:       %[[E:.+]] = stream.tensor.encode on(#hal.device.affinity<@gpu>)
// CHECK:       stream.async.clone on(#hal.device.affinity<@gpu>) %[[E]]
// CHECK-LABEL: util.func public @returned(
// CHECK:       %[[R:.+]] = stream.tensor.encode on(#hal.device.affinity<@gpu>)
// CHECK:       util.return %[[R]]
module @read_elsewhere {
  util.global private @cpu = #hal.device.target<"local", [#cpu_target]> : !hal.device
  util.global private @gpu = #hal.device.target<"cuda", [#gpu_target]> : !hal.device
  util.func public @moved(%r: !stream.resource<*>, %n: index) -> !stream.resource<*> {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #packed> : index
    %e = stream.tensor.encode on(#hal.device.affinity<@gpu>) %r : tensor<32x32xf32> in !stream.resource<*>{%n} -> tensor<32x32xf32, #packed> in !stream.resource<*>{%s}
    %c = stream.async.clone on(#hal.device.affinity<@gpu>) %e : !stream.resource<*>{%s} -> !stream.resource<*>{%s}
    %moved = stream.async.transfer %c : !stream.resource<*>{%s} from(#hal.device.affinity<@gpu>) -> to(#hal.device.affinity<@cpu>) !stream.resource<*>{%s}
    util.return %moved : !stream.resource<*>
  }
  util.func public @returned(%r: !stream.resource<*>, %n: index) -> !stream.resource<*> {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #packed> : index
    %e = stream.tensor.encode on(#hal.device.affinity<@gpu>) %r : tensor<32x32xf32> in !stream.resource<*>{%n} -> tensor<32x32xf32, #packed> in !stream.resource<*>{%s}
    util.return %e : !stream.resource<*>
  }
}

// -----

// A module whose devices all resolve encodings (two CPUs) is left as it is.
#cpu_target = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>}>
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#packed = #iree_encoding.encoding<operand_index = 1 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, #map2], iteration_sizes = [1, 128, 32, 32]>
// CHECK-LABEL: module @all_resolve
// CHECK:       stream.tensor.encode on(#hal.device.affinity<@a>)
module @all_resolve {
  util.global private @a = #hal.device.target<"local", [#cpu_target]> : !hal.device
  util.global private @b = #hal.device.target<"local", [#cpu_target]> : !hal.device
  util.func public @f(%r: !stream.resource<*>, %n: index) -> !stream.resource<*> {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@a>) tensor<32x32xf32, #packed> : index
    %e = stream.tensor.encode on(#hal.device.affinity<@a>) %r : tensor<32x32xf32> in !stream.resource<*>{%n} -> tensor<32x32xf32, #packed> in !stream.resource<*>{%s}
    %c = stream.async.clone on(#hal.device.affinity<@a>) %e : !stream.resource<*>{%s} -> !stream.resource<*>{%s}
    util.return %c : !stream.resource<*>
  }
}

// -----

// Globals that are not made one: a global whose address is taken (its
// loads go through the pointer), and a global of another type.
#gpu_target = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#prefill = #iree_encoding.encoding<operand_index = 1 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, #map2], iteration_sizes = [1, 128, 32, 32]>
#decode = #iree_encoding.encoding<operand_index = 1 : index, op_type = matmul, element_types = [f32, f32, f32], user_indexing_maps = [#map, #map1, #map2], iteration_sizes = [1, 1, 32, 32]>
// CHECK-LABEL: module @kept_apart
// CHECK:       util.global private @a : !stream.resource<constant>
// CHECK:       util.global private @addressed : !stream.resource<constant>
// CHECK:       util.global private @external : !stream.resource<external>
// CHECK-NOT:   stream.tensor.encode
// CHECK:       util.global.store %{{.+}}, @a
// CHECK:       util.global.store %{{.+}}, @addressed
// CHECK:       util.global.store %{{.+}}, @external
module @kept_apart {
  util.global private @gpu = #hal.device.target<"cuda", [#gpu_target]> : !hal.device
  util.global private @a : !stream.resource<constant>
  util.global private @addressed : !stream.resource<constant>
  util.global private @external : !stream.resource<external>
  stream.executable private @mm {
    stream.executable.export public @mm workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @mm(%in: !stream.binding, %w: !stream.binding, %out: !stream.binding) {
        return
      }
    }
  }
  util.initializer {
    %g = stream.tensor.constant on(#hal.device.affinity<@gpu>) : tensor<32x32xf32> in !stream.resource<constant> = dense<1.0> : tensor<32x32xf32>
    %n = stream.resource.size %g : !stream.resource<constant>
    %s1 = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #prefill> : index
    %s2 = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #decode> : index
    %x1 = stream.async.clone on(#hal.device.affinity<@gpu>) %g : !stream.resource<constant>{%n} -> !stream.resource<*>{%n}
    %e1 = stream.tensor.encode on(#hal.device.affinity<@gpu>) %x1 : tensor<32x32xf32> in !stream.resource<*>{%n} -> tensor<32x32xf32, #prefill> in !stream.resource<*>{%s1}
    %c1 = stream.async.clone on(#hal.device.affinity<@gpu>) %e1 : !stream.resource<*>{%s1} -> !stream.resource<constant>{%s1}
    %x2 = stream.async.clone on(#hal.device.affinity<@gpu>) %g : !stream.resource<constant>{%n} -> !stream.resource<*>{%n}
    %e2 = stream.tensor.encode on(#hal.device.affinity<@gpu>) %x2 : tensor<32x32xf32> in !stream.resource<*>{%n} -> tensor<32x32xf32, #decode> in !stream.resource<*>{%s2}
    %c2 = stream.async.clone on(#hal.device.affinity<@gpu>) %e2 : !stream.resource<*>{%s2} -> !stream.resource<constant>{%s2}
    %x3 = stream.async.clone on(#hal.device.affinity<@gpu>) %g : !stream.resource<constant>{%n} -> !stream.resource<*>{%n}
    %e3 = stream.tensor.encode on(#hal.device.affinity<@gpu>) %x3 : tensor<32x32xf32> in !stream.resource<*>{%n} -> tensor<32x32xf32, #decode> in !stream.resource<*>{%s2}
    %c3 = stream.async.clone on(#hal.device.affinity<@gpu>) %e3 : !stream.resource<*>{%s2} -> !stream.resource<external>{%s2}
    util.global.store %c1, @a : !stream.resource<constant>
    util.global.store %c2, @addressed : !stream.resource<constant>
    util.global.store %c3, @external : !stream.resource<external>
    util.return
  }
  util.func public @f(%x: !stream.resource<*>, %n: index) -> (!util.ptr<!stream.resource<constant>>, !stream.resource<*>, !stream.resource<*>) {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@gpu>) tensor<32x32xf32, #decode> : index
    %p = util.global.address @addressed : !util.ptr<!stream.resource<constant>>
    %a = util.global.load immutable @a : !stream.resource<constant>
    %aa = stream.async.clone on(#hal.device.affinity<@gpu>) %a : !stream.resource<constant>{%s} -> !stream.resource<*>{%s}
    %y = stream.tensor.dispatch on(#hal.device.affinity<@gpu>) @mm::@mm(%x, %aa) : (tensor<1x32xf32> in !stream.resource<*>{%n}, tensor<32x32xf32, #decode> in !stream.resource<*>{%s}) -> tensor<1x32xf32> in !stream.resource<*>{%n}
    %e = util.global.load immutable @external : !stream.resource<external>
    %ea = stream.async.clone on(#hal.device.affinity<@gpu>) %e : !stream.resource<external>{%s} -> !stream.resource<*>{%s}
    %z = stream.tensor.dispatch on(#hal.device.affinity<@gpu>) @mm::@mm(%x, %ea) : (tensor<1x32xf32> in !stream.resource<*>{%n}, tensor<32x32xf32, #decode> in !stream.resource<*>{%s}) -> tensor<1x32xf32> in !stream.resource<*>{%n}
    util.return %p, %y, %z : !util.ptr<!stream.resource<constant>>, !stream.resource<*>, !stream.resource<*>
  }
}
