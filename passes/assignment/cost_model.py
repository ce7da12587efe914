"""Seconds for a unit of work on a device, for a value crossing between two
devices, and for a call that uses a device, from a machine profile
(contract/machine_profile.py). Pure and deterministic: the same profile
and devices give the same numbers, and nothing here touches IR.

The formulas (docs/DESIGN.md, "The cost model"):

* a unit: ``seconds_per_dispatch + max(flops / matmul rate of its dtype,
  bytes_moved / bytes rate of its op class)``; the matmul rate is the
  fastest arithmetic the profile knows for the dtype, so it bounds every
  class's compute; a ``view`` moves no data and costs 0;
* a crossing of ``n`` bytes: 0 on one device, else ``latency + n /
  bandwidth`` of the profile's entry for the pair (names before kinds); a
  pair with no entry and neither end on the host goes through the host:
  source->host, then host->target. Two local devices share the host's
  memory, but a crossing between them still copies the value once from
  one device's allocation into the other's (staged or not: IREE's transfer
  between two devices is a copy), so it costs the profile's local->local
  entry, a host copy, and never 0: the model cannot see whether the link
  is staged and must not undercount it;
* a call: the device's ``seconds_per_call``, once per call for every
  device the call runs a unit on.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Optional

from mdc.contract.machine_profile import HOST_KIND, CrossingCosts, DeviceCosts, MachineProfile, ProfileError

from .work_graph import Unit


@dataclasses.dataclass(frozen=True)
class CostModel:
    """The profile's numbers resolved for one compile's devices: ``costs``
    by device name, ``crossings`` by ordered pair of distinct names (a
    tuple of CrossingCosts: one, or two through the host)."""

    costs: Mapping[str, DeviceCosts]
    crossings: Mapping[tuple[str, str], tuple[CrossingCosts, ...]]

    @classmethod
    def of(cls, profile: MachineProfile, devices: Mapping[str, str]) -> "CostModel":
        """The model for ``devices`` (symbol name without '@' -> IREE kind:
        local, cuda, vulkan, hip). ProfileError when the profile has no
        numbers for one of them or for a crossing between two."""
        costs = {}
        for name, kind in sorted(devices.items()):
            entry = profile.device(name, kind)
            if entry is None:
                raise ProfileError(f"the machine profile has no entry for device '{name}' (kind {kind}): "
                                   f"measure it with mdc-profile or add devices.{kind}")
            costs[name] = entry
        crossings = {(s, t): _route(profile, (s, devices[s]), (t, devices[t]))
                     for s in sorted(devices) for t in sorted(devices) if s != t}
        return cls(costs=costs, crossings=crossings)

    def unit_seconds(self, unit: Unit, device: str) -> float:
        """Seconds ``unit`` takes on ``device`` in one call."""
        if unit.op_class == "view":
            return 0.0
        d = self.costs[device]
        compute = unit.flops / d.flops_rate(unit.dtype)
        memory = unit.bytes_moved / d.bytes_rate(unit.op_class)
        return d.seconds_per_dispatch + max(compute, memory)

    def crossing_seconds(self, nbytes: int, source: str, target: str) -> float:
        """Seconds to move ``nbytes`` from ``source`` to ``target`` (0 on
        one device)."""
        if source == target:
            return 0.0
        return sum(c.latency_s + nbytes / c.bytes_per_s for c in self.crossings[(source, target)])

    def call_seconds(self, device: str) -> float:
        """The fixed cost of a call that runs at least one unit on ``device``."""
        return self.costs[device].seconds_per_call

    def reserved_bytes(self, device: str) -> int:
        """The memory the runtime takes on the device once it runs any work
        there, beside the program's buffers (the profile's reserved_bytes)."""
        return self.costs[device].reserved_bytes

    def memory_bytes(self, device: str) -> Optional[int]:
        """The device's memory, where the profile records it."""
        return self.costs[device].memory_bytes


def _route(profile: MachineProfile, source: tuple[str, str], target: tuple[str, str]) -> tuple[CrossingCosts, ...]:
    """The crossings a value takes from ``source`` to ``target``, each
    (name, kind): the pair's own entry, else through the host."""
    direct = profile.crossing(source, target)
    if direct is not None:
        return (direct,)
    host = (HOST_KIND, HOST_KIND)
    if HOST_KIND not in (source[1], target[1]):
        out, back = profile.crossing(source, host), profile.crossing(host, target)
        if out is not None and back is not None:
            return (out, back)
    raise ProfileError(f"the machine profile has no crossing from {source[1]} to {target[1]} "
                       f"(devices '{source[0]}' and '{target[0]}')")
