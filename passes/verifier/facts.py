"""What the ownership analysis knows of one SSA value: every origin it may have.

A value's facts are a frozenset of the records below; no facts means its
origin is unknown, which is never an error. Each record is a tuple tagged
by its kind (so that two kinds never compare equal); build one with
``Kind.of(...)``.
"""

from __future__ import annotations

from typing import NamedTuple

CALLER = "<caller>"  # a fence's origin: a fence the caller passed in
EMPTY: frozenset = frozenset()


class Device(NamedTuple):
    """A ``!hal.device``: the device global it was loaded from."""

    kind: str
    name: str

    @classmethod
    def of(cls, name: str) -> "Device":
        return cls("dev", name)


class Allocator(NamedTuple):
    """A ``!hal.allocator``: the allocator of device ``device``."""

    kind: str
    device: str

    @classmethod
    def of(cls, device: str) -> "Allocator":
        return cls("alloc", device)


class CommandBuffer(NamedTuple):
    """A ``!hal.command_buffer`` recorded for device ``device``."""

    kind: str
    device: str

    @classmethod
    def of(cls, device: str) -> "CommandBuffer":
        return cls("cmd", device)


class Buffer(NamedTuple):
    """A ``!hal.buffer`` (or buffer view) in the memory of device ``owner``.

    ``host_visible``: whether the memory is host-visible (None: unknown);
    ``location`` and ``index``: the op that allocated or imported it (index
    -1: a function argument)."""

    kind: str
    owner: str
    host_visible: bool | None
    location: str | None
    index: int

    @classmethod
    def of(cls, owner: str, host_visible: bool | None, location: str | None, index: int) -> "Buffer":
        return cls("buf", owner, host_visible, location, index)


class Fence(NamedTuple):
    """A ``!hal.fence`` created on device ``origin`` (or CALLER's)."""

    kind: str
    origin: str
    location: str | None
    index: int

    @classmethod
    def of(cls, origin: str, location: str | None, index: int) -> "Fence":
        return cls("fence", origin, location, index)


def of_kind(facts, kind: type) -> list:
    """The records of ``facts`` of one kind (Buffer, Fence, ...)."""
    return [f for f in facts if isinstance(f, kind)]
