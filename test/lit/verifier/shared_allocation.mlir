// Rule shared-allocation: no allocation is shared across a staged pair. IREE memoizes
// `hal.allocator.select` over the devices that use a value into a global
// (`@__allocator_select_device`) and allocates from whatever it picks; for a
// CPU and a GPU no such memory exists. Devices are recognised the way IREE
// declares them at the HAL phase: by the initializer that stores them.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>&1; echo "rc=$?") | %no-traceback | FileCheck %s
// The accepted inputs come out unchanged.
// RUN: (mdc-opt %s --pass=device-isolation-verifier --split-input-file 2>/dev/null; echo "rc=$?") | FileCheck %s --check-prefix=OUT

// local + cuda, the selection memoized in an initializer: rejected where the
// selection is made.
module {
  util.global private @device_a : !hal.device
  util.initializer {
    %c0 = arith.constant 0 : index
    %dev = hal.devices.get %c0 : !hal.device
    %ok, %is_local = hal.device.query<%dev : !hal.device> key("hal.device.id" :: "local*") : i1, i1 = false
    util.global.store %dev, @device_a : !hal.device
    util.return
  }
  util.global private @device_b : !hal.device
  util.initializer {
    %c1 = arith.constant 1 : index
    %c18 = arith.constant 18 : i32
    %dev = hal.devices.get %c1 : !hal.device
    util.status.check_ok %c18, "HAL device `device_b` not found or unavailable: #hal.device.target<\22cuda\22, {ordinal = 0 : index}>"
    util.global.store %dev, @device_b : !hal.device
    util.return
  }
  util.global private @__allocator_select_device : !hal.device
  util.initializer {
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load @device_a : !hal.device
    %b = util.global.load @device_b : !hal.device
    // CHECK: shared_allocation.mlir:[[# @LINE + 1]]:28: error: 'hal.allocator.select' makes one allocation serve device_a (local) and device_b (cuda), which do not share memory
    %selected, %affinity = hal.allocator.select from([(%a, %any : !hal.device, i64), (%b, %any : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    // CHECK-NEXT: note: device_a and device_b are a staged pair: local and cuda memories are incompatible
    // CHECK-NEXT: note: a buffer allocated for both is handed to a device that cannot address it
    // CHECK-NOT: note:
    util.global.store %selected, @__allocator_select_device : !hal.device
    util.return
  }
  util.func public @select_local_cuda() {
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %dev = util.global.load immutable @__allocator_select_device : !hal.device
    %ready = hal.fence.create device(%dev : !hal.device) flags("None") : !hal.fence
    %buffer = hal.device.queue.alloca<%dev : !hal.device> affinity(%any) wait(%none) signal(%ready) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    util.return
  }
}

// -----

// The same selection over two CUDA devices is IREE's own business: accepted.
module {
  util.global private @device_a : !hal.device
  util.initializer {
    %c0 = arith.constant 0 : index
    %dev = hal.devices.get %c0 : !hal.device
    %ok, %is_cuda = hal.device.query<%dev : !hal.device> key("hal.device.id" :: "cuda") : i1, i1 = false
    util.global.store %dev, @device_a : !hal.device
    util.return
  }
  util.global private @device_b : !hal.device
  util.initializer {
    %c1 = arith.constant 1 : index
    %dev = hal.devices.get %c1 : !hal.device
    %ok, %is_cuda = hal.device.query<%dev : !hal.device> key("hal.device.id" :: "cuda") : i1, i1 = false
    util.global.store %dev, @device_b : !hal.device
    util.return
  }
  util.global private @__allocator_select_device : !hal.device
  util.initializer {
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load @device_a : !hal.device
    %b = util.global.load @device_b : !hal.device
    %selected, %affinity = hal.allocator.select from([(%a, %any : !hal.device, i64), (%b, %any : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.global.store %selected, @__allocator_select_device : !hal.device
    util.return
  }
  // OUT-LABEL: util.func public @select_cuda_cuda(
  util.func public @select_cuda_cuda() {
    %c16 = arith.constant 16 : index
    %any = arith.constant -1 : i64
    %pool = arith.constant 0 : i64
    %none = util.null : !hal.fence
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %dev = util.global.load immutable @__allocator_select_device : !hal.device
    %ready = hal.fence.create device(%dev : !hal.device) flags("None") : !hal.fence
    // OUT: hal.device.queue.alloca<%{{.+}} : !hal.device>
    %buffer = hal.device.queue.alloca<%dev : !hal.device> affinity(%any) wait(%none) signal(%ready) pool(%pool) type(%type) usage(%usage) flags("None") : !hal.buffer{%c16}
    util.return
  }
}

// -----

// Three devices: the two CPUs share memory, so a selection over them is fine
// even though the program also has a GPU.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @device_c = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
  // OUT-LABEL: util.func public @select_two_cpus(
  util.func public @select_two_cpus() -> !hal.device {
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load @device_a : !hal.device
    %c = util.global.load @device_c : !hal.device
    %selected, %affinity = hal.allocator.select from([(%a, %any : !hal.device, i64), (%c, %any : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    util.return %selected : !hal.device
  }
}

// -----

// IREE's transient allocation for a value used on a CPU and a GPU, before it
// fails to legalize (stock local + cuda): rejected with its location.
module {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @resolve_local_cuda() -> (i32, i32) {
    // CHECK: shared_allocation.mlir:[[# @LINE + 1]]:29: error: 'hal.allocator.resolve_memory_properties' makes one allocation serve device_a (local) and device_b (cuda), which do not share memory
    %memory_types, %usage = hal.allocator.resolve_memory_properties for(#hal.device.optimal<[#hal.device.affinity<@device_a>, #hal.device.affinity<@device_b>]>) lifetime(transient) : i32, i32
    // CHECK-NEXT: note: device_a and device_b are a staged pair
    util.return %memory_types, %usage : i32, i32
  }
}

// -----

// A topology that claims transparent access does not make it true.
module attributes {stream.topology = #hal.device.topology<links = [(@device_a -> @device_b = {transparent_access = true}), (@device_b -> @device_a = {transparent_access = true})]>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @select_with_topology() -> !hal.device {
    %any = arith.constant -1 : i64
    %type = hal.memory_type<"HostVisible|DeviceVisible|DeviceLocal"> : i32
    %usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
    %a = util.global.load @device_a : !hal.device
    %b = util.global.load @device_b : !hal.device
    // CHECK: shared_allocation.mlir:[[# @LINE + 1]]:28: error: 'hal.allocator.select' makes one allocation serve device_a (local) and device_b (hip), which do not share memory
    %selected, %affinity = hal.allocator.select from([(%a, %any : !hal.device, i64), (%b, %any : !hal.device, i64)]) type(%type) usage(%usage) : !hal.device, i64
    // CHECK-NEXT: note: device_a and device_b are a staged pair: local and hip memories are incompatible
    // CHECK-NEXT: note: a buffer allocated for both
    // CHECK-NEXT: note: the module's stream.topology claims transparent_access between them
    util.return %selected : !hal.device
  }
}

// CHECK: rc=1
// OUT-NOT: @select_local_cuda
// OUT-NOT: @resolve_local_cuda
// OUT-NOT: @select_with_topology
// OUT: rc=1
