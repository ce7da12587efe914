"""What the ownership analysis knows of one SSA value: every origin it may have.

A value's facts are a frozenset of the records below; no facts means its
origin is unknown, which is never an error. Each record is a tagged tuple
(the tag last, so that two kinds never compare equal).
"""

from __future__ import annotations

from typing import NamedTuple

CALLER = "<caller>"  # a fence's origin: a fence the caller passed in
EMPTY: frozenset = frozenset()


class Device(NamedTuple):
    """A ``!hal.device``: the device global it was loaded from."""

    name: str
    kind: str = "dev"


class Allocator(NamedTuple):
    """A ``!hal.allocator``: the allocator of device ``device``."""

    device: str
    kind: str = "alloc"


class CommandBuffer(NamedTuple):
    """A ``!hal.command_buffer`` recorded for device ``device``."""

    device: str
    kind: str = "cmd"


class Buffer(NamedTuple):
    """A ``!hal.buffer`` (or buffer view) in the memory of device ``owner``.

    ``host_visible``: whether the memory is host-visible (None: unknown);
    ``location`` and ``index``: the op that allocated or imported it (index
    -1: a function argument)."""

    owner: str
    host_visible: bool | None
    location: str | None
    index: int
    kind: str = "buf"


class Fence(NamedTuple):
    """A ``!hal.fence`` created on device ``origin`` (or CALLER's)."""

    origin: str
    location: str | None
    index: int
    kind: str = "fence"


def of_kind(facts, kind: type) -> list:
    """The records of ``facts`` of one kind (Buffer, Fence, ...)."""
    return [f for f in facts if isinstance(f, kind)]
