// executable-per-target: an executable dispatched on devices of different
// executable targets gets one copy per further target (IREE 3.13.0 otherwise
// creates one device's executable from the other device's variant; see
// test/lit/regress/shared_executable_local_and_cuda.test). Devices of one
// target keep sharing; modules where every dispatch site has one target are
// untouched.
// RUN: mdc-opt %s --pass=executable-per-target --split-input-file | FileCheck %s
// Running it twice changes nothing more.
// RUN: mdc-opt %s --pass=executable-per-target,executable-per-target --split-input-file | FileCheck %s

// local, cuda, local: device_a and device_c share @neg; device_b's two
// dispatches (one inside a loop) go to one copy; the copy's body is the same.
// CHECK-LABEL: module @three_devices
// CHECK: stream.executable private @neg_t {
// CHECK: stream.executable.export public @neg_entry
// CHECK: math.absf
// CHECK: stream.executable private @neg {
// CHECK: stream.executable.export public @neg_entry
// CHECK: math.absf
// CHECK: util.func public @f
// CHECK: on(#hal.device.affinity<@device_a>) @neg::@neg_entry
// CHECK: on(#hal.device.affinity<@device_b>) @neg_t::@neg_entry
// CHECK: scf.for
// CHECK: on(#hal.device.affinity<@device_b>) @neg_t::@neg_entry
// CHECK: on(#hal.device.affinity<@device_c>) @neg::@neg_entry
// CHECK-NOT: @neg_t_1
module @three_devices {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  util.global private @device_c = #hal.device.target<"local", {ordinal = 1 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  stream.executable private @neg {
    stream.executable.export public @neg_entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @neg_entry(%in: !stream.binding, %out: !stream.binding) {
        %c0 = arith.constant 0 : index
        %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>>
        %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xf32>>
        %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0], sizes = [4], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>> -> tensor<4xf32>
        %3 = math.absf %2 : tensor<4xf32>
        iree_tensor_ext.dispatch.tensor.store %3, %1, offsets = [0], sizes = [4], strides = [1] : tensor<4xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xf32>>
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>, %n: index) -> (!stream.resource<*>, !stream.resource<*>, !stream.resource<*>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %a = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @neg::@neg_entry(%x) : (tensor<4xf32> in !stream.resource<*>{%c16}) -> tensor<4xf32> in !stream.resource<*>{%c16}
    %b = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @neg::@neg_entry(%x) : (tensor<4xf32> in !stream.resource<*>{%c16}) -> tensor<4xf32> in !stream.resource<*>{%c16}
    %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %b) -> (!stream.resource<*>) {
      %r = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @neg::@neg_entry(%acc) : (tensor<4xf32> in !stream.resource<*>{%c16}) -> tensor<4xf32> in !stream.resource<*>{%c16}
      scf.yield %r : !stream.resource<*>
    }
    %c = stream.tensor.dispatch on(#hal.device.affinity<@device_c>) @neg::@neg_entry(%x) : (tensor<4xf32> in !stream.resource<*>{%c16}) -> tensor<4xf32> in !stream.resource<*>{%c16}
    util.return %a, %l, %c : !stream.resource<*>, !stream.resource<*>, !stream.resource<*>
  }
}

// -----

// Two local devices have one target: nothing changes.
// CHECK-LABEL: module @local_pair
// CHECK-NOT: @neg_t
// CHECK: on(#hal.device.affinity<@device_a>) @neg::@neg_entry
// CHECK: on(#hal.device.affinity<@device_b>) @neg::@neg_entry
module @local_pair {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"local", {ordinal = 1 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  stream.executable private @neg {
    stream.executable.export public @neg_entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @neg_entry(%in: !stream.binding, %out: !stream.binding) {
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>) -> (!stream.resource<*>, !stream.resource<*>) {
    %c16 = arith.constant 16 : index
    %a = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @neg::@neg_entry(%x) : (tensor<4xf32> in !stream.resource<*>{%c16}) -> tensor<4xf32> in !stream.resource<*>{%c16}
    %b = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @neg::@neg_entry(%x) : (tensor<4xf32> in !stream.resource<*>{%c16}) -> tensor<4xf32> in !stream.resource<*>{%c16}
    util.return %a, %b : !stream.resource<*>, !stream.resource<*>
  }
}

// -----

// Each executable on one device only (the common case): nothing changes.
// CHECK-LABEL: module @one_target_each
// CHECK-NOT: _t::
// CHECK: on(#hal.device.affinity<@device_a>) @ea::@e
// CHECK: on(#hal.device.affinity<@device_b>) @eb::@e
module @one_target_each {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  stream.executable private @ea {
    stream.executable.export public @e workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @e(%in: !stream.binding, %out: !stream.binding) {
        return
      }
    }
  }
  stream.executable private @eb {
    stream.executable.export public @e workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @e(%in: !stream.binding, %out: !stream.binding) {
        return
      }
    }
  }
  util.func public @f(%x: !stream.resource<*>) -> (!stream.resource<*>, !stream.resource<*>) {
    %c16 = arith.constant 16 : index
    %a = stream.tensor.dispatch on(#hal.device.affinity<@device_a>) @ea::@e(%x) : (tensor<4xf32> in !stream.resource<*>{%c16}) -> tensor<4xf32> in !stream.resource<*>{%c16}
    %b = stream.tensor.dispatch on(#hal.device.affinity<@device_b>) @eb::@e(%x) : (tensor<4xf32> in !stream.resource<*>{%c16}) -> tensor<4xf32> in !stream.resource<*>{%c16}
    util.return %a, %b : !stream.resource<*>, !stream.resource<*>
  }
}
