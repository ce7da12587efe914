"""The order mdc's passes run in, stated once. Each level's passes run in
this order at that level (registry.passes_at).

STEPS are registered passes that the pipeline runs only inside a combined
pass (transfer-insertion runs place-unplaced-ops, then stage-crossings);
mdc-opt runs them by name, alone. place-unplaced-ops is in PIPELINE too: it
runs before stub-host-entry-points (below), and transfer-insertion's own
placement then finds nothing left to place.
"""

from __future__ import annotations

from .cuda_maxsi_warning import WarnCudaMaxsiReduction
from .declared_devices_default import DeclaredDevicesDefault
from .device_isolation_verifier import DeviceIsolationVerifier
from .cross_driver_waits import CrossDriverWaits
from .dealloca_affinity import DeallocaAffinity
from .executable_per_target import ExecutablePerTarget
from .host_entry_points import HostEntryPoints
from .host_fences import HostFences
from .loop_init_isolation import LoopInitIsolation
from .partition_fence import PartitionFence
from .recursive_calls import RefuseRecursiveCalls
from .result_storage_twins import ResultStorageTwins
from .returned_arguments import ReturnedArgumentMoves
from .place_unplaced_ops import PlaceUnplacedOps
from .stage_crossings import StageCrossings
from .strip_marks import StripMarks
from .stub_host_entry_points import StubHostEntryPoints
from .transfer_insertion import TransferInsertion

# The order mdc-compile has run them in, kept exactly: it came from the order
# modules first imported the registry, not from the list the registry meant
# to state. pipeline/cli.py imported host_entry_points before the registry
# loaded the rest, and pipeline/report.py imported transfer_insertion, so
# host-entry-points ran before refuse-recursive-calls and
# returned-argument-moves, and transfer-insertion before
# executable-per-target. Changing the order changes the vmfbs.
# stub-host-entry-points adds twins at the stream level, before
# transfer-insertion stages their moves, and after place-unplaced-ops: a
# result IREE left unplaced ends where mdc's placement puts it, and the twin
# decision must read the same placed IR the manifest's result_devices is
# read from (op_affinity_three: a result placed on a GPU got
# result_devices but no twin).
# result-storage-twins follows host-entry-points, whose twins get none.
# strip-mdc-marks is last at the stream level: the marks passes read
# (mdc.staged) never reach IREE. dealloca-affinity runs on IREE's
# scheduled stream IR, before the HAL conversion, and cross-driver-waits
# after it, on the deallocas where they now run. warn-cuda-maxsi-reduction
# only reads the IR (every dispatch placed by then). declared-devices-default
# is first: the input-level passes after it read the default it sets.
PIPELINE = [
    DeclaredDevicesDefault,
    HostEntryPoints,
    ResultStorageTwins,
    RefuseRecursiveCalls,
    ReturnedArgumentMoves,
    PlaceUnplacedOps,
    StubHostEntryPoints,
    TransferInsertion,
    ExecutablePerTarget,
    LoopInitIsolation,
    HostFences,
    PartitionFence,
    WarnCudaMaxsiReduction,
    StripMarks,
    DeallocaAffinity,
    CrossDriverWaits,
    DeviceIsolationVerifier,
]

STEPS = [StageCrossings]

_names = [p.name for p in [*PIPELINE, *STEPS]]
assert len(_names) == len(set(_names)), _names
assert all(p.level in ("input", "stream", "scheduled", "hal") for p in PIPELINE), PIPELINE
