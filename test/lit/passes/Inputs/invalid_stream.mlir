// Parses, but does not verify: util.return's type differs from the signature.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.func public @mismatch(%x: index) -> i32 {
    util.return %x : index
  }
}
