// Input of cross_driver_waits.mlir: two CPUs, one awaiting the other.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
util.global private @device_c = #hal.device.target<"local", {ordinal = 1 : index}> : !hal.device
util.func public @two_cpus() -> !stream.timepoint {
  %c16 = arith.constant 16 : index
  %ra, %ta = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_a>) : !stream.resource<transient>{%c16} => !stream.timepoint
  %rc, %tc = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_c>) await(%ta) => !stream.resource<transient>{%c16} => !stream.timepoint
  %rd, %td = stream.resource.alloca uninitialized on(#hal.device.affinity<@device_a>) await(%tc) => !stream.resource<transient>{%c16} => !stream.timepoint
  util.return %td : !stream.timepoint
}
}
