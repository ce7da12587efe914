// Stream-tensor IR of an argument declared on device_b (cuda) returned as a
// result declared on device_a (local), with nothing staging the crossing: an
// import on device_b whose resource is exported on device_a. It is what
// `mdc-compile --compile-to=stream-tensor` gives for
// test/lit/regress/argument_returned_on_other_device.mlir on local + cuda,
// less IREE's stream.async.transfer b -> a (returned-argument-moves' move).
// Before that pass there was no move at all: IREE's ABI folded the import
// and the export to `util.return %arg0` (results.mlir's @folded), and with
// --iree-execution-model=async-external it keeps them as here, with no move
// between them (transfer-insertion stages that one).
module attributes {stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}, [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  util.global private @device_b = #hal.device.target<"cuda", {ordinal = 0 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
  util.func public @passthrough(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @passthrough(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"}} {
    %c4 = arith.constant 4 : index
    %element_type_f32 = hal.element_type<f32> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c4]) type(%element_type_f32) encoding(%dense_row_major)
    %0 = stream.tensor.sizeof on(#hal.device.affinity<@device_b>) tensor<4xf32> : index
    %1 = stream.tensor.import on(#hal.device.affinity<@device_b>) %arg0 : !hal.buffer_view -> tensor<4xf32> in !stream.resource<external>{%0}
    %2 = stream.async.cast on(#hal.device.affinity<@device_b>) %1 : !stream.resource<external>{%0} -> !stream.resource<*>{%0}
    %4 = stream.async.cast on(#hal.device.affinity<@device_a>) %2 : !stream.resource<*>{%0} -> !stream.resource<external>{%0}
    %5 = stream.tensor.export on(#hal.device.affinity<@device_a>) %4 : tensor<4xf32> in !stream.resource<external>{%0} -> !hal.buffer_view
    util.return %5 : !hal.buffer_view
  }
}
