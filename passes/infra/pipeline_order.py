"""The order mdc's passes run in, derived from what each declares.

Each pass states, on its class (pass_base.ModulePass), the facts of the IR
it needs before it runs, those it provides and those it removes
(pass_base.Fact). ``schedule`` orders the passes of each level, the levels
in LEVELS order, so that

* a pass runs after every pass of its level that provides a fact it needs
  (a fact no pass of its level provides must come from an earlier level);
* a pass that removes a fact runs after every pass of its level that needs
  it, and after any other pass that is ready to run: what it takes away no
  later pass can want;
* passes free to run in either order run in the order of their names.

PIPELINE is that order of PASSES; the reasons are each pass's own
declarations. STEPS are registered passes that the pipeline runs only
inside a combined pass (transfer-insertion runs place-unplaced-ops, then
stage-crossings); mdc-opt runs them by name, alone. place-unplaced-ops is
in PIPELINE too: stub-host-entry-points needs the IR it places, and
transfer-insertion's own placement then finds nothing left to place.
"""

from __future__ import annotations

from typing import Iterable

from ..transforms.assign_devices import AssignDevices
from ..targets.cuda.cuda_matmul_configs import CudaMatmulConfigs
from ..targets.cuda.cuda_maxsi_warning import WarnCudaMaxsiReduction
from ..transforms.declared_devices_default import DeclaredDevicesDefault
from ..verifier.device_isolation_verifier import DeviceIsolationVerifier
from ..transforms.cross_driver_waits import CrossDriverWaits
from ..transforms.dealloca_affinity import DeallocaAffinity
from ..transforms.executable_per_target import ExecutablePerTarget
from ..transforms.forward_plain_encodings import ForwardPlainEncodings
from ..transforms.generate_entry_point import GenerateEntryPoint
from ..transforms.host_entry_points import HostEntryPoints
from ..transforms.host_fences import HostFences
from ..transforms.loop_init_isolation import LoopInitIsolation
from ..transforms.memoized_selects_in_order import MemoizedSelectsInOrder
from ..transforms.partition_fence import PartitionFence
from .pass_base import ModulePass
from ..transforms.recursive_calls import RefuseRecursiveCalls
from ..transforms.result_storage_twins import ResultStorageTwins
from ..transforms.returned_arguments import ReturnedArgumentMoves
from ..transforms.place_encoded_sizes import PlaceEncodedSizes
from ..transforms.place_unplaced_ops import PlaceUnplacedOps
from ..transforms.plain_encoded_crossings import PlainEncodedCrossings
from ..transforms.stage_crossings import StageCrossings
from ..transforms.state_initial_values import StateInitialValues
from ..transforms.strip_marks import StripMarks
from ..transforms.stub_host_entry_points import StubHostEntryPoints
from ..transforms.transfer_insertion import TransferInsertion

LEVELS = ("input", "stream", "scheduled", "hal")


class OrderError(Exception):
    """The passes' declarations admit no order (a declaration bug)."""


def _level_order(passes: list[type[ModulePass]], available: set) -> list[type[ModulePass]]:
    """``passes`` (of one level) in dependency order; ``available``: the
    facts earlier levels provide."""
    after: dict[type[ModulePass], set] = {p: set() for p in passes}
    for p in passes:
        for fact in p.needs:
            providers = {q for q in passes if fact in q.provides and q is not p}
            if not providers and fact not in available:
                raise OrderError(f"{p.name} needs '{fact.value}', which no pass before it provides")
            after[p] |= providers
        for fact in p.removes:
            after[p] |= {q for q in passes if fact in q.needs and q is not p}
    order: list[type[ModulePass]] = []
    while len(order) < len(passes):
        ready = [p for p in passes if p not in order and after[p] <= set(order)]
        if not ready:
            stuck = sorted(p.name for p in passes if p not in order)
            raise OrderError(f"the passes {stuck} wait on each other")
        order.append(min(ready, key=lambda p: (bool(p.removes), p.name)))
    return order


def schedule(passes: Iterable[type[ModulePass]]) -> list[type[ModulePass]]:
    """``passes`` in the order they run: level by level, each level in the
    order its passes' declarations give (this module's docstring)."""
    passes = list(passes)
    unknown = [p.name for p in passes if p.level not in LEVELS]
    if unknown:
        raise OrderError(f"passes of no known level: {unknown}")
    order: list[type[ModulePass]] = []
    available: set = set()
    for level in LEVELS:
        at_level = _level_order([p for p in passes if p.level == level], available)
        for p in at_level:
            available |= set(p.provides)
            available -= set(p.removes)
        order += at_level
    return order


# Every pass the pipeline runs, in no particular order: schedule() orders them.
PASSES = [
    AssignDevices,
    CrossDriverWaits,
    CudaMatmulConfigs,
    DeallocaAffinity,
    DeclaredDevicesDefault,
    DeviceIsolationVerifier,
    ExecutablePerTarget,
    ForwardPlainEncodings,
    GenerateEntryPoint,
    HostEntryPoints,
    HostFences,
    LoopInitIsolation,
    MemoizedSelectsInOrder,
    PartitionFence,
    PlaceEncodedSizes,
    PlaceUnplacedOps,
    PlainEncodedCrossings,
    RefuseRecursiveCalls,
    ResultStorageTwins,
    ReturnedArgumentMoves,
    StateInitialValues,
    StripMarks,
    StubHostEntryPoints,
    TransferInsertion,
    WarnCudaMaxsiReduction,
]

PIPELINE = schedule(PASSES)

STEPS = [StageCrossings]

_names = [p.name for p in [*PIPELINE, *STEPS]]
assert len(_names) == len(set(_names)), _names
