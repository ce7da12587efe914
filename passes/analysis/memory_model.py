"""Which device pairs share memory and which must stage through the host.

The model is derived from the devices a module declares (its ``util.global``
of type ``!hal.device`` whose initial value is a ``#hal.device.target``, as
module_facts.declared_devices reads them) and
the user's ``--link`` overrides. For every ordered pair it answers one
:class:`LinkPolicy`:

* a device with itself, two ``local`` devices, and two devices of one GPU
  driver: ``shared``. IREE already handles these pairs correctly.
* ``local`` with any other driver (cuda, hip, vulkan, ...): ``staged``. The
  discrete side owns the staging memory (its allocator hands out pinned host
  memory that both sides can use; docs/DESIGN.md section 2).
* two GPUs of different drivers: ``staged`` twice, through a local device
  the program declares (``via``). Without one this is an error.
* ``--link=X:Y=staged`` forces staging in both directions with Y as owner;
  ``--link=X:Y=shared`` is refused for pairs the runtime cannot share.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Mapping

from mdc.contract.manifest_record import Device

from ..infra.diagnostics import MdcError


@dataclasses.dataclass(frozen=True)
class LinkPolicy:
    mode: str  # "shared" | "staged" | "staged-via-host"
    owner: str | None = None  # device whose allocator provides staging memory
    via: str | None = None  # local device in the middle, for staged-via-host
    reason: str = ""

    @property
    def is_staged(self) -> bool:
        return self.mode != "shared"


def _governed(links: Mapping | None, devices: Mapping) -> dict:
    """The --link overrides between two of ``devices``. Front ends check
    --link names against the devices they were given; IREE may since have
    dropped a device the program no longer uses, and a link to it then has
    nothing to govern."""
    return {pair: value for pair, value in (links or {}).items() if all(n in devices for n in pair)}


class MemoryModel:
    """The policy of every ordered pair of ``devices`` (by symbol, in
    declaration order), given the ``--link`` overrides ``links``. A value
    object: two models of the same inputs (``key``) answer alike, so a
    compile builds one per device set, all in one place
    (pass_base.MemoryModels; passes get theirs from pass_manager.py)."""

    def __init__(self, devices: dict[str, Device], links: dict | None = None):
        self.devices = devices
        self.overrides = _governed(links, devices)
        for pair, (mode, owner, flag) in self.overrides.items():
            a, b = sorted(pair)
            if mode == "shared" and self._natural(a, b).is_staged:
                da, db = devices[a], devices[b]
                raise MdcError(
                    f"--link={flag} is impossible: {a} ({da.kind}) and "
                    f"{b} ({db.kind}) cannot address each other's memory",
                    notes=[
                        "a queue of one driver given another driver's device buffer "
                        "fails (CUDA_ERROR_INVALID_VALUE) or is undefined behaviour",
                        "leave the pair staged, or force staging with =staged",
                    ],
                )

    @staticmethod
    def key(devices: Mapping[str, Device], links: Mapping | None = None) -> tuple:
        """What a model of ``devices`` and ``links`` answers from: each
        device's name and kind in order (a device's ordinal and location
        decide no policy) and the overrides that govern two of them."""
        return (tuple((name, d.kind) for name, d in devices.items()),
                frozenset(_governed(links, devices).items()))

    def policy(self, src: str, dst: str) -> LinkPolicy:
        if src == dst:
            return LinkPolicy("shared", reason="same device")
        override = self.overrides.get(frozenset((src, dst)))
        if override is not None:
            mode, owner, _flag = override
            if mode == "staged":
                return LinkPolicy("staged", owner=owner, reason=f"forced by --link (owner {owner})")
            return LinkPolicy("shared", reason="forced by --link")
        return self._natural(src, dst)

    def _natural(self, src: str, dst: str) -> LinkPolicy:
        for name in (src, dst):
            if name not in self.devices:
                raise MdcError(
                    f"an affinity names device '{name}', which the module does not declare",
                    notes=[f"declared devices: {', '.join(sorted(self.devices)) or 'none'}"],
                )
        a, b = self.devices[src], self.devices[dst]
        if a.uses_host_memory and b.uses_host_memory:
            return LinkPolicy("shared", reason="both local: one host memory")
        if a.kind == b.kind:
            return LinkPolicy("shared", reason=f"one {a.kind} driver: left to IREE")
        if a.uses_host_memory or b.uses_host_memory:
            owner = b.name if a.uses_host_memory else a.name
            return LinkPolicy(
                "staged",
                owner=owner,
                reason=f"{a.kind} and {b.kind} memories are incompatible; "
                f"{owner}'s pinned host memory is usable by both",
            )
        host = next((d.name for d in self.devices.values() if d.uses_host_memory), None)
        if host is None:
            raise MdcError(
                f"values move between {src} ({a.kind}) and {dst} ({b.kind}), "
                "GPUs of different drivers, and the program declares no local device",
                location=None,
                notes=[
                    "no stock HAL op copies between two drivers' memories; mdc stages "
                    "such moves through a local device's queue",
                    "add one, e.g. --device=host=local[0] (the program need not use it)",
                ],
            )
        return LinkPolicy(
            "staged-via-host",
            via=host,
            reason=f"{a.kind} and {b.kind} are different GPU drivers: "
            f"staged through {host}",
        )

    @property
    def anything_staged(self) -> bool:
        """Some ordered pair of the devices is staged: the question every
        pass that leaves an all-shared module to IREE asks."""
        return bool(self.staged_pairs())

    @functools.cached_property
    def needs_staging(self) -> bool:
        """Some pair is staged, or the module has GPUs of two drivers (whose
        values go through a host; staged even where no host is declared,
        which is then an error at the first such crossing)."""
        drivers = {d.kind for d in self.devices.values() if not d.uses_host_memory}
        return self.anything_staged or len(drivers) > 1

    def staged_pairs(self) -> list[tuple[str, str, LinkPolicy]]:
        """Every staged ordered pair (src, dst, policy), in device order;
        a pair the model cannot stage (GPUs of two drivers, no host) is left
        out. Computed once."""
        return list(self._staged_pairs)

    @functools.cached_property
    def _staged_pairs(self) -> tuple[tuple[str, str, LinkPolicy], ...]:
        names = list(self.devices)
        out = []
        for s in names:
            for d in names:
                if s != d:
                    try:
                        p = self.policy(s, d)
                    except MdcError:
                        continue
                    if p.is_staged:
                        out.append((s, d, p))
        return tuple(out)
