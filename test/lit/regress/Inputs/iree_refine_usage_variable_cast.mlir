// Stream IR that mdc-compile made before the fix of
// test/lit/regress/global_read_on_gpu_side.mlir (its @read_b, minus the reflection,
// other functions and most of the CPU target): a global's value staged to
// device_b and cast back to !stream.resource<variable> before its clone.
// Stock iree-opt's iree-stream-refine-usage runs out of memory on it
// (iree_refine_usage_variable_cast.test).
#executable_target_embedded_elf_x86_64 = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "znver4", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 64 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>
#device_target_local_0_ = #hal.device.target<"local", {ordinal = 0 : index}, [#executable_target_embedded_elf_x86_64]> : !hal.device
#device_target_local_1_ = #hal.device.target<"local", {ordinal = 1 : index}, [#executable_target_embedded_elf_x86_64]> : !hal.device
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private mutable @__mdc_stage_pinned_site : !hal.buffer
  util.global private @device_a = #device_target_local_0_
  util.global private @device_b = #device_target_local_1_
  util.global private mutable @s : !stream.resource<variable>
  util.initializer {
    %c16 = arith.constant 16 : index
    %c1065353216_i32 = arith.constant 1065353216 : i32
    %0 = stream.async.splat on(#hal.device.affinity<@device_a>) %c1065353216_i32 : i32 -> !stream.resource<variable>{%c16}
    util.global.store %0, @s : !stream.resource<variable>
    util.return
  }
  util.func public @read_b() -> !hal.buffer_view {
    %c0 = arith.constant 0 : index
    %c0_0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %s = util.global.load @s : !stream.resource<variable>
    %0 = stream.resource.size %s : !stream.resource<variable>
    %1 = util.call @__mdc_stage_pinned_site_view(%0) : (index) -> !hal.buffer_view
    %2 = stream.tensor.import on(#hal.device.affinity<@device_a>) consume %1 : !hal.buffer_view -> tensor<?xi8>{%0} in !stream.resource<external>{%0}
    %3 = stream.async.cast on(#hal.device.affinity<@device_a>) %s : !stream.resource<variable>{%0} -> !stream.resource<*>{%0}
    %4 = stream.async.dispatch on(#hal.device.affinity<@device_a>) @__mdc_copy_on_device_a::@__mdc_copy_on_device_a_bytes[%0](%3[%c0_0 to %0 for %0], %0, %c0_0, %0, %2[%c0_0 to %0 for %0]) : (!stream.resource<*>{%0}, index, index, index, !stream.resource<external>{%0}) -> %2 as !stream.resource<*>{%0}
    %5 = stream.async.transfer %4 : !stream.resource<*>{%0} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_a>) !stream.resource<external>{%0}
    %result, %result_timepoint = stream.timepoint.barrier on(#hal.device.affinity<@device_a>) %5 : !stream.resource<external>{%0} => !stream.timepoint
    %6 = stream.timepoint.export on(#hal.device.affinity<@device_a>) %result_timepoint => (!hal.fence)
    %7 = stream.tensor.export on(#hal.device.affinity<@device_a>) %result : tensor<?xi8>{%0} in !stream.resource<external>{%0} -> !hal.buffer_view
    %8 = util.call @__mdc_stage_await_view(%6, %7) : (!hal.fence, !hal.buffer_view) -> !hal.buffer_view
    %9 = stream.tensor.import on(#hal.device.affinity<@device_b>) %8 : !hal.buffer_view -> tensor<?xi8>{%0} in !stream.resource<external>{%0}
    %10 = stream.async.cast on(#hal.device.affinity<@device_b>) %9 : !stream.resource<external>{%0} -> !stream.resource<*>{%0}
    %11 = stream.async.dispatch on(#hal.device.affinity<@device_b>) @__mdc_copy_on_device_b::@__mdc_copy_on_device_b_bytes[%0](%10[%c0_0 to %0 for %0], %0, %c0_0, %0) : (!stream.resource<*>{%0}, index, index, index) -> !stream.resource<*>{%0}
    %result_1, %result_timepoint_2 = stream.timepoint.barrier on(#hal.device.affinity<@device_b>) %11 : !stream.resource<*>{%0} => !stream.timepoint
    %12 = stream.timepoint.export on(#hal.device.affinity<@device_b>) %result_timepoint_2 => (!hal.fence)
    util.call @__mdc_stage_await(%12) : (!hal.fence) -> ()
    %13 = stream.async.cast on(#hal.device.affinity<@device_b>) %result_1 : !stream.resource<*>{%0} -> !stream.resource<variable>{%0}
    %14 = stream.async.clone on(#hal.device.affinity<@device_b>) %13 : !stream.resource<variable>{%c16} -> !stream.resource<*>{%c16}
    %15 = stream.async.cast on(#hal.device.affinity<@device_b>) %14 : !stream.resource<*>{%c16} -> !stream.resource<external>{%c16}
    %16 = stream.tensor.export on(#hal.device.affinity<@device_b>) %15 : tensor<4xf32> in !stream.resource<external>{%c16} -> !hal.buffer_view
    util.return %16 : !hal.buffer_view
  }
  util.func private @__mdc_stage_pinned_view(%arg0: !hal.buffer, %arg1: index, %arg2: !hal.device) -> (!hal.buffer, !hal.buffer_view) attributes {inlining_policy = #util.inline.never} {
    %0 = util.null : !hal.buffer
    %buffer_usage = hal.buffer_usage<"TransferSource|TransferTarget|Transfer|DispatchStorageRead|DispatchStorageWrite|DispatchStorage|MappingScoped|MappingPersistent|MappingAccessRandom|Mapping"> : i32
    %memory_type = hal.memory_type<"HostVisible|HostCoherent|HostLocal|DeviceVisible"> : i32
    %c0 = arith.constant 0 : index
    %c-1_i64 = arith.constant -1 : i64
    %allocator = hal.device.allocator<%arg2 : !hal.device> : !hal.allocator
    %1 = util.cmp.eq %arg0, %0 : !hal.buffer
    %2 = scf.if %1 -> (!hal.buffer) {
      %buffer = hal.allocator.allocate<%allocator : !hal.allocator> affinity(%c-1_i64) type(%memory_type) usage(%buffer_usage) : !hal.buffer{%arg1}
      scf.yield %buffer : !hal.buffer
    } else {
      %length = hal.buffer.length<%arg0 : !hal.buffer> : index
      %3 = arith.cmpi ult, %length, %arg1 : index
      %4 = scf.if %3 -> (!hal.buffer) {
        %buffer = hal.allocator.allocate<%allocator : !hal.allocator> affinity(%c-1_i64) type(%memory_type) usage(%buffer_usage) : !hal.buffer{%arg1}
        scf.yield %buffer : !hal.buffer
      } else {
        scf.yield %arg0 : !hal.buffer
      }
      scf.yield %4 : !hal.buffer
    }
    %element_type_i8 = hal.element_type<i8> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    %view = hal.buffer_view.create buffer(%2 : !hal.buffer)[%c0, %arg1] shape([%arg1]) type(%element_type_i8) encoding(%dense_row_major) : !hal.buffer_view
    util.return %2, %view : !hal.buffer, !hal.buffer_view
  }
  util.func private @__mdc_stage_pinned_site_view(%arg0: index) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
    %device_b = util.global.load immutable @device_b : !hal.device
    %__mdc_stage_pinned_site = util.global.load @__mdc_stage_pinned_site : !hal.buffer
    %0:2 = util.call @__mdc_stage_pinned_view(%__mdc_stage_pinned_site, %arg0, %device_b) : (!hal.buffer, index, !hal.device) -> (!hal.buffer, !hal.buffer_view)
    util.global.store %0#0, @__mdc_stage_pinned_site : !hal.buffer
    util.return %0#1 : !hal.buffer_view
  }
  stream.executable private @__mdc_copy_on_device_a {
    stream.executable.export public @__mdc_copy_on_device_a_bytes workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @__mdc_copy_on_device_a_bytes(%arg0: !stream.binding, %arg1: index, %arg2: index, %arg3: index, %arg4: !stream.binding) {
        %c0 = arith.constant 0 : index
        %0 = iree_tensor_ext.dispatch.workload.ordinal %arg3, 0 : index
        %1 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xi8>>{%arg1}
        %2 = stream.binding.subspan %arg4[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?xi8>>{%0}
        %3 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [%arg2], sizes = [%0], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xi8>>{%arg1} -> tensor<?xi8>
        iree_tensor_ext.dispatch.tensor.store %3, %2, offsets = [0], sizes = [%0], strides = [1] : tensor<?xi8> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?xi8>>{%0}
        return
      }
    }
  }
  util.func private @__mdc_stage_await_view(%arg0: !hal.fence, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
    %c0_i32 = arith.constant 0 : i32
    %c0 = arith.constant 0 : index
    %c-1_i32 = arith.constant -1 : i32
    %0 = util.null : !hal.fence
    %1 = util.cmp.eq %arg0, %0 : !hal.fence
    scf.if %1 {
    } else {
      %status = hal.fence.await until([%arg0]) timeout_millis(%c-1_i32) flags("None") : i32
      %3 = arith.cmpi ne, %status, %c0_i32 : i32
      scf.if %3 {
        util.status.check_ok %status, "mdc: a copy through staging memory failed"
      }
    }
    %2 = hal.buffer_view.dim<%arg1 : !hal.buffer_view>[0] : index
    %buffer = hal.buffer_view.buffer<%arg1 : !hal.buffer_view> : !hal.buffer
    %element_type_i8 = hal.element_type<i8> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    %view = hal.buffer_view.create buffer(%buffer : !hal.buffer)[%c0, %2] shape([%2]) type(%element_type_i8) encoding(%dense_row_major) : !hal.buffer_view
    util.return %view : !hal.buffer_view
  }
  stream.executable private @__mdc_copy_on_device_b {
    stream.executable.export public @__mdc_copy_on_device_b_bytes workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      stream.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @__mdc_copy_on_device_b_bytes(%arg0: !stream.binding, %arg1: index, %arg2: index, %arg3: index, %arg4: !stream.binding) {
        %c0 = arith.constant 0 : index
        %0 = iree_tensor_ext.dispatch.workload.ordinal %arg3, 0 : index
        %1 = stream.binding.subspan %arg0[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xi8>>{%arg1}
        %2 = stream.binding.subspan %arg4[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?xi8>>{%0}
        %3 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [%arg2], sizes = [%0], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xi8>>{%arg1} -> tensor<?xi8>
        iree_tensor_ext.dispatch.tensor.store %3, %2, offsets = [0], sizes = [%0], strides = [1] : tensor<?xi8> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?xi8>>{%0}
        return
      }
    }
  }
  util.func private @__mdc_stage_await(%arg0: !hal.fence) attributes {inlining_policy = #util.inline.never} {
    %c0_i32 = arith.constant 0 : i32
    %c-1_i32 = arith.constant -1 : i32
    %0 = util.null : !hal.fence
    %1 = util.cmp.eq %arg0, %0 : !hal.fence
    scf.if %1 {
    } else {
      %status = hal.fence.await until([%arg0]) timeout_millis(%c-1_i32) flags("None") : i32
      %2 = arith.cmpi ne, %status, %c0_i32 : i32
      scf.if %2 {
        util.status.check_ok %status, "mdc: a copy through staging memory failed"
      }
    }
    util.return
  }
}
