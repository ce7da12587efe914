// A cuda -> hip transfer and no local device declared.
module attributes {stream.affinity.default = #hal.device.affinity<@nv>} {
  util.global private @nv = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.global private @amd = #hal.device.target<"hip", {ordinal = 0 : index}> : !hal.device
  util.func public @explicit_transfer(%v: f32, %size: index) -> !stream.resource<*> {
    %x = stream.tensor.splat on(#hal.device.affinity<@nv>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%size}
    %y = stream.async.transfer %x : !stream.resource<*>{%size} from(#hal.device.affinity<@nv>) -> to(#hal.device.affinity<@amd>) !stream.resource<*>{%size}
    util.return %y : !stream.resource<*>
  }
}
