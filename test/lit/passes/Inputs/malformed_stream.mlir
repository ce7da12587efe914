// A stream-level function whose transfer names a value nobody defined.
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @broken(%size: index) -> !stream.resource<*> {
    %on_b = stream.async.transfer %missing : !stream.resource<*>{%size} from(#hal.device.affinity<@device_a>) -> to(#hal.device.affinity<@device_b>) !stream.resource<*>{%size}
    util.return %on_b : !stream.resource<*>
  }
}
