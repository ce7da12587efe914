"""``mdc-profile --program-kit=DIR``, the timing half: the kit program.py
built, timed on this machine's devices with the runtime alone, into a
costs file (contract/place_costs.py).

Per device (opened from the kit's runtime URI): its module loaded, the
fixed costs measured as measure.py measures them (a dispatch: (@chain -
@tiny) / (CHAIN_LENGTH - 1); a call: @tiny less a dispatch, at least
@identity), then each unit's function called with arguments already on
the device (random floats; zeros for integers, so that an index is in
range): on the host its seconds are its call's less @tiny's plus one
dispatch, the call's fixed cost being counted once a call by the cost
model, not per unit. On the accelerator (the index's ``copies`` C > 1)
they are what one more copy of the unit adds to a call: the call of
``uN_copies`` (C copies) less the call of ``uN`` (one), over C - 1, at
least a dispatch; program_units.py says why. Where the index says the
copies read arguments of their own (``own_arguments``), ``uN_copies`` is
given C sets. Every unit is timed over argument sets whose bytes
together pass COLD_BYTES, each call reading the next set in turn: a
program reads each weight once a call from memory, while a call repeated
over one set (or copies over one set) reads it from a cache (the H100's
50 MB L2 made a 2048x5632 f16 matvec 3.8 us, faster than its memory
allows, in the first costs trip). A unit whose ``uN`` or
``uN_copies`` did not compile for a device is modelled there. Units that
share a function are timed once. Crossings: each size
the kit lists, host->accelerator and back, timed as measure.py times a
crossing (a pinned buffer and the device's queue copy).
"""

from __future__ import annotations

import os
from typing import Callable, Optional

import numpy as np

from mdc.contract.place_costs import MeasuredCrossing, MeasuredDevice, MeasuredUnit, PlaceCosts

from . import probes
from .program import copies_symbol, unit_symbol
from .measure import DeviceProbe, Timer, per_dispatch, time_transfer

# One unit's timing: shorter than a probe's, as a program has many units.
TIMERS = {True: Timer(seconds=0.03, min_runs=3), False: Timer(seconds=0.2, min_runs=5)}
# The bytes a unit's argument sets pass together (the module's doc), and
# the most sets one timing uses (a unit of a few KiB stays in a cache
# anyway, and is a dispatch's time).
COLD_BYTES = 256 << 20
MAX_SETS = 64


def _arguments(spec: list, rng: np.random.Generator) -> list[np.ndarray]:
    made = []
    for shape, dtype in spec:
        if np.issubdtype(np.dtype(dtype), np.floating):
            made.append(rng.standard_normal(shape).astype(dtype))
        else:
            made.append(np.zeros(shape, dtype))
    return made


def _rotation(nbytes: int) -> int:
    """How many argument sets of ``nbytes`` a timing takes turns over."""
    return max(1, min(MAX_SETS, -(-COLD_BYTES // max(nbytes, 1))))


def _sets(one: list[np.ndarray], count: int) -> list[list[np.ndarray]]:
    """``count`` argument sets like ``one``, each in memory of its own: set
    j's floats are ``one``'s times 1 + j / 1024, its integers ``one``'s."""
    return [one] + [[a * np.asarray(1 + j / 1024, a.dtype) if np.issubdtype(a.dtype, np.floating) else a.copy()
                     for a in one] for j in range(1, count)]


def _fixed_costs(probe: DeviceProbe) -> tuple[float, float, float]:
    """(seconds of @tiny, of a dispatch, of a call's fixed cost)."""
    per_call = probe.time_call("identity", [np.ones(4, np.float32)])
    step = [np.full(probes.STEP_SHAPE, 0.25, np.float32)] * 2
    tiny = probe.time_call("tiny", step)
    chain = probe.time_call("chain", step)
    dispatch = per_dispatch(tiny, chain)
    return tiny, dispatch, max(tiny - dispatch, per_call)


def time_kit(directory: str, index: dict, quick: bool, open_device: Callable,
             say: Optional[Callable[[str], None]] = None) -> PlaceCosts:
    """The costs file's contents for the kit in ``directory`` (``index``:
    program.load_index's); ``open_device(uri)`` opens a runtime device."""
    timer = TIMERS[quick]
    rng = np.random.default_rng(0)
    opened, devices, seconds = {}, {}, {}
    for name, d in index["devices"].items():
        device = open_device(d["uri"])
        opened[name] = device
        with open(os.path.join(directory, d["module"]), "rb") as f:
            probe = DeviceProbe(device, d["kind"], None, timer, f.read())
        tiny, dispatch, call = _fixed_costs(probe)
        devices[name] = MeasuredDevice(d["kind"], call, dispatch)
        by_symbol: dict[str, float] = {}
        for unit in index["units"]:
            symbol = unit["symbol"]
            if not timed_on(symbol, d):  # did not compile for this device: modelled there
                continue
            if symbol not in by_symbol:
                by_symbol[symbol] = _unit_seconds(probe, unit, d, tiny, dispatch, rng)
            seconds.setdefault((unit["function"], unit["id"]), {})[name] = by_symbol[symbol]
        for symbol, why in d.get("dropped", {}).items():
            if say:
                say(f"{name}: {symbol} did not compile ({why}); the units of "
                    f"{unit_symbol(symbol)} are modelled there")
        if say:
            say(f"{name} ({d['uri']}): {len(by_symbol)} unit functions timed; call {call * 1e6:.1f} us, "
                f"dispatch {dispatch * 1e6:.2f} us")
    units = tuple(MeasuredUnit(u["function"], u["id"], u["op"], u["label"], seconds[(u["function"], u["id"])],
                               bool(u["at_bound"])) for u in index["units"] if (u["function"], u["id"]) in seconds)
    return PlaceCosts(index["functions"], devices, units, _crossings(index, opened, timer))


def _unit_seconds(probe: DeviceProbe, unit: dict, device: dict, tiny: float, dispatch: float,
                  rng: np.random.Generator) -> float:
    """One unit's seconds on ``device`` (an index entry), as the module's doc says."""
    symbol, one = unit["symbol"], _arguments(unit["arguments"], rng)
    nbytes = sum(a.nbytes for a in one)
    singles = _sets(one, _rotation(nbytes))
    took = probe.time_calls(symbol, singles)
    copies = device.get("copies", 1)
    if copies == 1:
        return max(took - tiny, 0.0) + dispatch
    if device.get("own_arguments"):
        sets = _sets(one, copies * _rotation(copies * nbytes))
        calls = [[a for s in sets[i:i + copies] for a in s] for i in range(0, len(sets), copies)]
    else:  # a kit whose copies share one set of arguments
        calls = singles
    took_copies = probe.time_calls(copies_symbol(symbol), calls)
    return max((took_copies - took) / (copies - 1), dispatch)


def timed_on(symbol: str, device: dict) -> bool:
    """Whether unit function ``symbol`` is timed on ``device`` (an index
    entry): it compiled there and, where the device runs copies, so did
    its function of copies."""
    dropped = device.get("dropped", {})
    return symbol not in dropped and (device.get("copies", 1) == 1 or copies_symbol(symbol) not in dropped)


def _crossings(index: dict, opened: dict, timer: Timer) -> tuple[MeasuredCrossing, ...]:
    host, accelerator = index["host"], index["accelerator"]
    device = opened[accelerator]
    found = []
    for nbytes in index["crossings"]:
        found.append(MeasuredCrossing(host, accelerator, nbytes, time_transfer(device, timer, nbytes, True)))
        found.append(MeasuredCrossing(accelerator, host, nbytes, time_transfer(device, timer, nbytes, False)))
    return tuple(found)
