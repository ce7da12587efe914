"""Pipelined calls: ``f.map(xs, ys, depth=2)``, calls in flight together.

A split program's call is a CPU stage, a crossing, a GPU stage and a
crossing back, and the host waits for each device in turn. One call at a
time leaves the GPU idle while the CPU works and the other way round. With
``map``, call i+1 starts while call i still runs: its CPU stage overlaps
call i's GPU stage.

Two calls cannot share one VM context: the program's crossing sites keep
their pinned buffers and fences in the context's globals. So ``map`` runs
calls in *lanes*: lane k is a VM context of its own (on the same devices,
the same loaded module), used by one thread, and call i runs in lane
``i % depth``. Calls in one lane run in order, as plain calls do. The
lanes are not the module's own context, so plain calls from another
thread while a ``map`` runs are safe; two ``map``s of one module at once
are refused.
IREE's runtime releases the GIL while a call runs, so the lanes' threads run
together. What a lane costs: the module's initialisation once more (its
constants and weights uploaded again, held until ``close()``).

A program that keeps state of its own between calls (a mutable global:
the manifest's ``mutable_globals``) would get one copy of it per lane, so
``map`` refuses more than one lane for a function that refers to it (the
manifest's ``state_by_function``; without that entry, every function of
such a program), for a module whose state is not known (no mdc manifest,
or one written before ``mutable_globals``), and for one loaded with
dependencies (their globals are in every lane too).
``depth=1`` is a plain loop.

A call reads its inputs while it runs (an array for a CPU device is
imported, not copied), so an item is read from the iterables only when a
lane is free for it, and the caller must leave an item's arrays alone until
its result has come out. ``close()`` waits for the calls running in lanes
(``Lanes.call``, lanes.py, counts them); the threads hold a lane's index,
never its context, so a paused map keeps no context alive after it.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
from typing import Iterable, Iterator

from mdc.contract.manifest import KEY as MANIFEST_KEY

from .errors import ShimError


def check_depth(function, depth) -> int:
    """``depth`` as a lane count, or ShimError naming what is wrong."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ShimError(f"@{function.name}.map: depth must be a whole number of at least 1, got {depth!r}")
    if depth == 1:
        return depth
    module = function.module
    where = f"@{function.name}.map with depth {depth}"
    manifest = module.manifest
    if manifest is None or manifest.source != MANIFEST_KEY:
        raise ShimError(f"{where}: {module.path} has no mdc manifest, so whether it keeps state between calls "
                        "is not known, and each lane would have its own (use depth=1, or compile it with "
                        "mdc-compile)")
    state = manifest.state_of(function.name)
    if state is None:
        raise ShimError(f"{where}: the manifest of {module.path} does not say whether the program keeps state "
                        "between calls (an older mdc-compile wrote it); compile it again, or use depth=1")
    if state:
        names = ", ".join(f"@{g}" for g in state)
        raise ShimError(f"{where}: the function keeps state between calls in mutable globals ({names}), and "
                        "each lane would have its own copy; use depth=1")
    if module.dependencies:
        raise ShimError(f"{where}: the module was loaded with dependencies, whose state each lane would hold "
                        "once more; use depth=1")
    return depth


def map_calls(function, iterables: tuple[Iterable, ...], depth: int) -> Iterator:
    """The results of ``function(*args)`` for each ``args`` of
    ``zip(*iterables)``, in order, with up to ``depth`` calls in flight,
    call i in lane ``i % depth``; an item is read from the iterables only
    when a lane is free for it. ``function._acquire_lanes(depth)`` (on the
    first step of the iteration) opens the lanes and returns, per lane, the
    initializer that binds a thread to it; ``function._lane_call(*args)``
    is a call on a lane's thread; ``function._release_lanes()`` runs when
    the iteration ends, however it ends. A call's error is raised where its
    result would be; the calls still in flight finish first."""
    items = zip(*iterables)
    if depth == 1:
        for args in items:
            yield function(*args)
        return
    initializers = function._acquire_lanes(depth)
    try:
        lanes = [concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"mdc-{function.name}-lane{k}",
                                                       initializer=initializer)
                 for k, initializer in enumerate(initializers)]
        pending: collections.deque = collections.deque()
        try:
            for i in itertools.count():
                if len(pending) == depth:
                    yield pending.popleft().result()
                args = next(items, None)
                if args is None:
                    break
                pending.append(lanes[i % depth].submit(function._lane_call, *args))
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
            for lane in lanes:
                lane.shutdown(wait=True)
    finally:
        function._release_lanes()
