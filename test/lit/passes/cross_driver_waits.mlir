// cross-driver-waits: a queue operation that awaits a timepoint of a device
// its queue cannot wait on (a GPU awaiting a CPU's or another driver's; the
// owner of a pair forced staged awaiting the other) has the host wait for
// that part instead; the parts its queue may wait on stay, joins taken
// apart. A CPU awaiting a GPU's timepoint, devices that share memory, and a
// timepoint of unknown origin stay as IREE made them.
// RUN: mdc-opt %s --split-input-file --pass=cross-driver-waits | FileCheck %s
// Two CPUs share memory and wait on each other as IREE made it; forced
// staged, device_c (the owner) plays the GPU.
// RUN: mdc-opt %S/Inputs/cross_driver_waits_two_cpus.mlir --pass=cross-driver-waits | FileCheck %s --check-prefix=SHARED
// RUN: mdc-opt %S/Inputs/cross_driver_waits_two_cpus.mlir --pass=cross-driver-waits --link=a:c=staged | FileCheck %s --check-prefix=FORCED

// The shape of progen seed 796349654 index 104: at the loop's exit a
// dealloca on the CPU awaits the CPU's work and the loop's GPU timepoint (a
// CPU may wait on a GPU: it stays), and the GPU's next alloca awaits that
// dealloca (the host waits for it). An affinity-less dealloca runs on the
// default device, the CPU: the GPU's alloca after it has the host wait too.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
// CHECK-LABEL: util.func public @loop_exit(
// CHECK:       ^bb3:
// CHECK-NEXT:    %[[JOIN:.+]] = stream.timepoint.join max(%[[CPU:.+]], %{{.+}})
// CHECK-NEXT:    %[[FREED:.+]] = stream.resource.dealloca on(#hal.device.affinity<@device_a>) await(%[[JOIN]])
// CHECK-NEXT:    %[[FENCE:.+]] = stream.timepoint.export %[[FREED]] => (!hal.fence)
// CHECK-NEXT:    util.call @__mdc_host_await_other_driver(%[[FENCE]])
// CHECK-NEXT:    %[[NOW:.+]] = stream.timepoint.immediate
// CHECK-NEXT:    stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%[[NOW]])
// CHECK:         %[[ORIGIN:.+]] = stream.resource.dealloca origin await(
// CHECK-NEXT:    %[[FENCE2:.+]] = stream.timepoint.export %[[ORIGIN]] => (!hal.fence)
// CHECK-NEXT:    util.call @__mdc_host_await_other_driver(%[[FENCE2]])
// CHECK-NEXT:    %[[NOW2:.+]] = stream.timepoint.immediate
// CHECK-NEXT:    stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%[[NOW2]])
util.func public @loop_exit(%n: index) -> !stream.timepoint {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %byte = arith.constant 0 : i8
  %now = stream.timepoint.immediate => !stream.timepoint
  %ra, %ta = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_a>) : !stream.resource<constant>{%c16} => !stream.timepoint
  %cpu = stream.cmd.execute on(#hal.device.affinity<@device_a>) await(%ta) => with(%ra as %x: !stream.resource<constant>{%c16}) {
    stream.cmd.fill %byte, %x[%c0 for %c16] : i8 -> !stream.resource<constant>{%c16}
  } => !stream.timepoint
  cf.br ^bb1(%c0, %now : index, !stream.timepoint)
^bb1(%i: index, %tp: !stream.timepoint):
  %p = arith.cmpi slt, %i, %n : index
  cf.cond_br %p, ^bb2, ^bb3
^bb2:
  %rb, %tb = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%tp) => !stream.resource<transient>{%c16} => !stream.timepoint
  %i2 = arith.addi %i, %c1 : index
  cf.br ^bb1(%i2, %tb : index, !stream.timepoint)
^bb3:
  %join = stream.timepoint.join max(%cpu, %tp) => !stream.timepoint
  %freed = stream.resource.dealloca on(#hal.device.affinity<@device_a>) await(%join) => %ra : !stream.resource<constant>{%c16} => !stream.timepoint
  %rc, %tc = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%freed) => !stream.resource<external>{%c16} => !stream.timepoint
  %origin = stream.resource.dealloca origin await(%tc) => %rc : !stream.resource<external>{%c16} => !stream.timepoint
  %rd, %td = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%origin) => !stream.resource<external>{%c16} => !stream.timepoint
  util.return %td : !stream.timepoint
}

// A join of the CPU's and the GPU's timepoints awaited by the GPU: the host
// waits for the CPU's part only, and the GPU's queue for its own. Two
// GPU parts stay joined.
// CHECK-LABEL: util.func public @split_join(
// CHECK:         %[[FENCE:.+]] = stream.timepoint.export %[[CPU:.+]] => (!hal.fence)
// CHECK-NEXT:    util.call @__mdc_host_await_other_driver(%[[FENCE]])
// CHECK-NEXT:    stream.cmd.execute on(#hal.device.affinity<@device_b>) await(%[[GPU:[^)]+]])
// CHECK:         %[[FENCE2:.+]] = stream.timepoint.export %[[CPU]] => (!hal.fence)
// CHECK-NEXT:    util.call @__mdc_host_await_other_driver(%[[FENCE2]])
// CHECK-NEXT:    %[[OWN:.+]] = stream.timepoint.join max(%[[GPU]], %{{.+}})
// CHECK-NEXT:    stream.cmd.execute on(#hal.device.affinity<@device_b>) await(%[[OWN]])
util.func public @split_join() -> !stream.timepoint {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %byte = arith.constant 0 : i8
  %ra, %cpu = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_a>) : !stream.resource<transient>{%c16} => !stream.timepoint
  %rb, %gpu = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) : !stream.resource<transient>{%c16} => !stream.timepoint
  %rc, %gpu2 = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) : !stream.resource<transient>{%c16} => !stream.timepoint
  %both = stream.timepoint.join max(%cpu, %gpu) => !stream.timepoint
  %t1 = stream.cmd.execute on(#hal.device.affinity<@device_b>) await(%both) => with(%rb as %x: !stream.resource<transient>{%c16}) {
    stream.cmd.fill %byte, %x[%c0 for %c16] : i8 -> !stream.resource<transient>{%c16}
  } => !stream.timepoint
  %three = stream.timepoint.join max(%both, %gpu2) => !stream.timepoint
  %t2 = stream.cmd.execute on(#hal.device.affinity<@device_b>) await(%three) => with(%rc as %x: !stream.resource<transient>{%c16}) {
    stream.cmd.fill %byte, %x[%c0 for %c16] : i8 -> !stream.resource<transient>{%c16}
  } => !stream.timepoint
  util.return %t2 : !stream.timepoint
}

// A join of the CPU's timepoint and one of unknown origin (a function
// argument) awaited by the GPU: the host waits for the CPU's part, and the
// GPU's queue keeps the unknown part.
// CHECK-LABEL: util.func public @join_with_unknown(
// CHECK-SAME:    %[[GIVEN:[^:]+]]: !stream.timepoint
// CHECK:         %[[FENCE:.+]] = stream.timepoint.export %{{.+}} => (!hal.fence)
// CHECK-NEXT:    util.call @__mdc_host_await_other_driver(%[[FENCE]])
// CHECK-NEXT:    stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%[[GIVEN]])
util.func public @join_with_unknown(%given: !stream.timepoint) -> !stream.timepoint {
  %c16 = arith.constant 16 : index
  %ra, %cpu = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_a>) : !stream.resource<transient>{%c16} => !stream.timepoint
  %both = stream.timepoint.join max(%cpu, %given) => !stream.timepoint
  %rb, %gpu = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%both) => !stream.resource<transient>{%c16} => !stream.timepoint
  util.return %gpu : !stream.timepoint
}

// Negative: the CPU awaits the GPU's timepoint (a CPU queue may wait on a
// GPU's semaphore), and the GPU awaits a timepoint it was given (unknown
// origin) and its own.
// CHECK-LABEL: util.func public @left_alone(
// CHECK-NOT:     __mdc_host_await
// CHECK:         stream.cmd.execute on(#hal.device.affinity<@device_a>) await(%{{.+}})
// CHECK-NOT:     __mdc_host_await
// CHECK:         util.return
// The one host wait, added once.
// CHECK:       util.func private @__mdc_host_await_other_driver(%{{.+}}: !hal.fence)
// CHECK:         hal.fence.await
util.func public @left_alone(%given: !stream.timepoint) -> !stream.timepoint {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %byte = arith.constant 0 : i8
  %rb, %gpu = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%given) => !stream.resource<transient>{%c16} => !stream.timepoint
  %ra, %cpu_alloc = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_a>) await(%gpu) => !stream.resource<transient>{%c16} => !stream.timepoint
  %t = stream.cmd.execute on(#hal.device.affinity<@device_a>) await(%cpu_alloc) => with(%ra as %x: !stream.resource<transient>{%c16}) {
    stream.cmd.fill %byte, %x[%c0 for %c16] : i8 -> !stream.resource<transient>{%c16}
  } => !stream.timepoint
  %rc, %own = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) await(%gpu) => !stream.resource<transient>{%c16} => !stream.timepoint
  util.return %own : !stream.timepoint
}
}

// -----
// Two GPUs of different drivers, staged through the CPU: neither queue
// waits on the other's timepoint.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
util.global private @device_v = #hal.device.target<"vulkan", {ordinal = 0 : index}> : !hal.device
// CHECK-LABEL: util.func public @two_drivers(
// CHECK:         util.call @__mdc_host_await_other_driver(
// CHECK-NEXT:    %[[NOW:.+]] = stream.timepoint.immediate
// CHECK-NEXT:    stream.resource.alloca uninitialized on(#hal.device.affinity<@device_v>) await(%[[NOW]])
util.func public @two_drivers() -> !stream.timepoint {
  %c16 = arith.constant 16 : index
  %byte = arith.constant 0 : i8
  %rb, %tb = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) : !stream.resource<transient>{%c16} => !stream.timepoint
  %rv, %tv = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_v>) await(%tb) => !stream.resource<transient>{%c16} => !stream.timepoint
  util.return %tv : !stream.timepoint
}
}

// -----
// Negative: two GPUs of one driver share memory and wait on each other.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
util.global private @device_d = #hal.device.target<"cuda", {ordinal = 1 : index}> : !hal.device
// CHECK-LABEL: util.func public @one_driver(
// CHECK-NOT:     __mdc_host_await
// CHECK:         util.return
util.func public @one_driver() -> !stream.timepoint {
  %c16 = arith.constant 16 : index
  %byte = arith.constant 0 : i8
  %rb, %tb = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_b>) : !stream.resource<transient>{%c16} => !stream.timepoint
  %rd, %td = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_d>) await(%tb) => !stream.resource<transient>{%c16} => !stream.timepoint
  util.return %td : !stream.timepoint
}
}

// Two CPUs: they share memory and wait on each other as IREE made it; forced
// staged (--link=a:c=staged), device_c owns the staging memory and plays
// the GPU: it has the host wait for device_a's timepoint, while device_a
// still waits on device_c's in its queue.
// SHARED-LABEL: util.func public @two_cpus(
// SHARED-NOT:     __mdc_host_await
// SHARED:         util.return
// FORCED-LABEL: util.func public @two_cpus(
// FORCED:         util.call @__mdc_host_await_other_driver(
// FORCED-NEXT:    %[[NOW:.+]] = stream.timepoint.immediate
// FORCED-NEXT:    %{{.+}}, %[[TC:.+]] = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_c>) await(%[[NOW]])
// FORCED-NEXT:    stream.resource.alloca uninitialized on(#hal.device.affinity<@device_a>) await(%[[TC]])
// FORCED-NOT:     __mdc_host_await
// FORCED:         util.return
