"""transfer-insertion: stage every crossing between incompatible memories.

IREE 3.13 gives a value used on two devices one buffer, allocated on
``#hal.device.optimal<[A, B]>``; for a local CPU and a discrete GPU no such
memory exists and compilation fails (or, with a transparent-access topology,
the program hangs on the GPU). This pass runs on stream-tensor IR, before
IREE schedules or allocates anything, and rewrites each crossing between a
*staged* pair of the memory model into three explicit steps:

1. export on the source device: the bytes of the value as a
   ``!hal.buffer_view`` (``stream.async.cast`` to ``external``, then
   ``stream.tensor.export``; IREE inserts the host wait for the producer);
2. host staging (``@__mdc_stage_*``, stock HAL VM ops only; see
   staging_library.mlir): copy on the source queue, after the value's own
   timepoint, into pinned host memory from the owner's allocator, wait on
   the host, copy on the destination queue into a buffer from the
   destination's allocator, wait on the host. Every queue only sees fences
   of its own device and buffers it can use;
3. import on the destination device, cast back to the original lifetime.

The bytes travel as ``tensor<?xi8>`` of the resource's size, so rank,
dynamic dimensions and element type need no special handling.

With ``--staging=emplace`` a crossing between a CPU and the device owning
the staging memory has its CPU side done by dispatches on that CPU, which
run on all its workers (a local-task queue copy runs on one thread): each
crossing site has its own pinned buffer, which the CPU writes with the
value's producing dispatch (or a byte-copy dispatch) and reads with a
byte-copy dispatch; the GPU side stays one queue copy. Staging in
initializers keeps the copying lowering. A small crossing (at most
SMALL_CROSSING_BYTES, known at compile time) has no queue copy at all: the
GPU's dispatches read the value in the pinned buffer, and a GPU producer
writes it there (the site's next write waits on the host for the reads,
whose fence the site records; small_in_place.py).

With ``--pinned-arguments`` the caller gives every public-function argument
that a CPU passes on to the device owning the staging memory *in that
device's pinned memory* (runtime_shim places it there; the manifest lists
them; abi.py). Such a crossing is the destination's queue copy straight from the
argument: no host copy and no staging buffer. No stock HAL VM op can tell
pinned memory from a CPU's own at run time, so this is a contract of the
compiled function, not a guess. The same holds for an output argument
(``iree.abi.output``) that a value coming back from that device is
written into: the device's queue copies it straight into the storage.

A value coming back to a CPU into an output argument in the CPU's memory
(no flag) is copied out of pinned memory straight into that storage by the
CPU's copy dispatch. Either way the result is the storage itself, not the
copy of it that IREE would make.

It is two steps, each a registered pass of its own that mdc-opt runs by
name: place-unplaced-ops (place_unplaced_ops.py: ops with no affinity get
one by residence.py's rule; the residence graph) and stage-crossings
(stage_crossings.py: find each crossing and lower it; lowering/ holds one
module per lowering: copy.py, emplace.py, small_in_place.py,
pinned_arguments.py). This pass runs both, the second on the residence
analysis of the placed module (the pass manager's, through its handle),
and is the pipeline's step. Modules whose device pairs
all share memory are left untouched.
"""

from __future__ import annotations

from ..lowering import StagingOptions
from ..analysis.memory_model import MemoryModel
from ..infra.outputs import Report
from ..infra.pass_base import Fact, Handle, ModulePass
from ..infra.pass_manager import AnalysisHandle
from ..analysis.residence import Residence
from .place_unplaced_ops import place
from .stage_crossings import stage_crossings


class TransferInsertion(ModulePass):
    """Stages every crossing between devices whose memories are incompatible:
    place-unplaced-ops, then stage-crossings on its residence."""

    name = "transfer-insertion"
    level = "stream"
    summary = "lower cross-device moves between incompatible memories to export, host staging, import"

    Options = StagingOptions

    requires = (MemoryModel, Handle(Residence))
    # It stages the moves of stub-host-entry-points' twins too (its own
    # residence finds the ops place-unplaced-ops placed).
    needs = (Fact.PLACED_OPS, Fact.STUB_TWINS, Fact.PLAIN_CROSSINGS)
    provides = (Fact.STAGED_CROSSINGS, Fact.MDC_MARKS)

    def apply(self, module, options: StagingOptions, model: MemoryModel, residence: AnalysisHandle) -> Report:
        analyzed, graph, placed = place(module, model, residence)
        report = Report(graph=graph, placed_ops=placed)
        if model.needs_staging:
            report.crossings.extend(stage_crossings(module, model, analyzed, options))
        return report
