// strip-mdc-marks: every mdc.* attribute on an op (mdc.staged, which the
// lowerings put on their staging calls and byte-copy dispatches for
// loop-init-isolation) is removed, so IREE's pipelines never see one. Other
// attributes, and the module's own attributes, stay.
// RUN: mdc-opt %s --pass=strip-mdc-marks --split-input-file | FileCheck %s
// Through the pipeline's steps: transfer-insertion marks, strip-mdc-marks
// leaves none.
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion --staging=emplace | FileCheck %s --check-prefix=MARKED
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion,strip-mdc-marks --staging=emplace | FileCheck %s --check-prefix=STRIPPED
// RUN: mdc-opt %S/Inputs/local_cuda_round_trip.mlir --pass=transfer-insertion,strip-mdc-marks --staging=copy | FileCheck %s --check-prefix=STRIPPED

// CHECK-LABEL: module attributes {mdc.pinned_arguments = {}, stream.affinity.default
// CHECK:       util.func private @helper(%{{.+}}: !hal.buffer_view) -> !hal.buffer_view {
// CHECK-NOT:   mdc.
// CHECK:       util.call @helper(%{{.+}}) {keep.me} : (!hal.buffer_view) -> !hal.buffer_view
// CHECK-NEXT:  util.call @helper(%{{.+}}) : (!hal.buffer_view) -> !hal.buffer_view
// CHECK-NOT:   mdc.
module attributes {mdc.pinned_arguments = {}, stream.affinity.default = #hal.device.affinity<@device_a>} {
  util.global private @device_a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.func private @helper(%v: !hal.buffer_view) -> !hal.buffer_view {
    util.return %v : !hal.buffer_view
  }
  util.func public @f(%v: !hal.buffer_view) -> !hal.buffer_view {
    %a = util.call @helper(%v) {keep.me, mdc.staged} : (!hal.buffer_view) -> !hal.buffer_view
    %b = util.call @helper(%a) {mdc.staged, mdc.other} : (!hal.buffer_view) -> !hal.buffer_view
    util.return %b : !hal.buffer_view
  }
}

// -----

// Negative: a module with no marks is printed as it was.
// CHECK-LABEL: util.func public @unmarked(
// CHECK-NEXT:  %[[C:.+]] = util.call @id(%{{.+}}) {note = "x"} : (index) -> index
// CHECK-NEXT:  util.return %[[C]] : index
module {
  util.func private @id(%i: index) -> index {
    util.return %i : index
  }
  util.func public @unmarked(%i: index) -> index {
    %c = util.call @id(%i) {note = "x"} : (index) -> index
    util.return %c : index
  }
}

// MARKED: util.call @__mdc_stage_{{.+}} {mdc.staged}
// MARKED: stream.tensor.dispatch {{.+}}@__mdc_copy_on_{{.+}} {mdc.staged}
// STRIPPED: util.call @__mdc_stage_
// STRIPPED-NOT: mdc.staged
