"""Runtime devices: creating them from URIs, binding declared devices to them,
and checking that staging owners can provide shared host memory.

Shared host (staging) memory. The compiled program allocates its own staging
buffers, from the allocator of the device the manifest names as `owner`
(the discrete device: its pinned host memory can be used by the CPU's queues
and by its own). The shim allocates none. It only checks, before the first
call, that every owner is bound to a given device and that this device's
allocator can hand out host-local, device-visible, mappable memory.

Why not `iree_hal_device_replace_allocator`: the stock Python runtime cannot
reach it. The PyPI wheel exports no C symbols and ships no headers, the
Python bindings do not wrap it, and upstream marks it for removal. Choosing
the owner's allocator inside the compiled program gives the same effect.

Binding, as IREE's compiled `__init` does it: a declared device `kind[n]`
is the (n+1)-th given runtime device whose device id matches the kind
(`local` matches `local-task` and `local-sync`; `cuda` matches `cuda`). The
position of the --device flags does not matter beyond that order. IREE also
skips devices that cannot load the module's executable format; the shim does
not model that (all devices of one driver load the same formats), and a
mismatch surfaces when the module is initialised.
"""

from __future__ import annotations

from typing import Optional, Sequence

import iree.runtime as rt

from mdc.contract.manifest import driver_uses_host_memory

from .errors import ShimError, short
from .manifest import MANIFEST_KEY, Manifest

STAGING_MEMORY = rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE
STAGING_USAGE = rt.BufferUsage.TRANSFER | rt.BufferUsage.MAPPING


def driver_name(uri: str) -> str:
    """The driver a device URI names, as IREE splits it: `cuda`, `cuda://1`
    and `cuda:1` all name `cuda`."""
    name = uri.split(":", 1)[0].strip()
    if not name:
        raise ShimError(f"bad device URI {uri!r}")
    return name


def is_local(uri: str) -> bool:
    """Whether the device shares the host's memory (IREE's `local` kind)."""
    return driver_uses_host_memory(driver_name(uri))


def kind_matches(kind: str, uri: str) -> bool:
    driver = driver_name(uri)
    return driver == kind or driver.startswith(kind + "-")


def open_device(uri: str) -> rt.HalDevice:
    """A new device instance for `uri` (never a cached one).

    `rt.get_device` caches by URI, so two `--device=local-task` would be one
    device; creating from the (cached, shared) driver gives distinct ones.
    """
    driver = usable_driver(uri)
    try:
        if ":" in uri:
            return driver.create_device_by_uri(uri)
        return driver.create_default_device()
    except (RuntimeError, ValueError) as e:
        raise ShimError(f"cannot create device '{uri}': {_reason(e)}") from None


def usable_driver(uri: str) -> rt.HalDriver:
    """The driver of `uri`, loaded: ShimError where this runtime has no such
    driver or it cannot work on this machine (no GPU library). Opens no
    device."""
    name = driver_name(uri)
    try:
        return rt.get_driver(name)
    except ValueError:  # NOT_FOUND: no such driver compiled in
        raise ShimError(f"device '{uri}': unknown driver '{name}' "
                        f"(available: {', '.join(rt.query_available_drivers())})") from None
    except RuntimeError as e:  # UNAVAILABLE: no GPU library on this machine
        raise ShimError(f"device '{uri}': the '{name}' driver is not available here: "
                        f"{_reason(e)}") from None


class UnsupportedDeviceSet(RuntimeError):
    """The stock runtime cannot open these devices together (not a user
    mistake: mdc-run reports it with exit status 1)."""


_WHY_REFUSED = ("IREE 3.13's Python runtime gives a HAL module of several devices a device group of "
                "its own, which a Vulkan device refuses to join (\"Vulkan queue frontier already assigned\")")
_FALLBACK = ("stock iree-run-module can, for programs whose arguments all live on its first device and "
             "whose results live in host-visible memory")


def refused_device_set(uris: Sequence[str]) -> Optional[str]:
    """Why IREE 3.13's Python runtime cannot open the devices ``uris``
    together, or None where it can: a Vulkan device beside any other
    device, a Vulkan one included (create_hal_module says why). Known
    from the URIs alone, so that ``load`` chooses its backend before it
    builds anything."""
    vulkan = [u for u in uris if driver_name(u) == "vulkan"]
    if not vulkan or len(uris) < 2:
        return None
    return (f"IREE 3.13's Python runtime cannot open a Vulkan device ({', '.join(vulkan)}) beside "
            f"another device ({', '.join(u for u in uris if u not in vulkan)})")


def unsupported(reason: str) -> UnsupportedDeviceSet:
    """The error for devices the Python runtime refuses (``reason``:
    refused_device_set's) where no fallback is taken."""
    return UnsupportedDeviceSet(f"{reason}: {_WHY_REFUSED}; {_FALLBACK}")


def create_hal_module(instance: rt.VmInstance, devices: Sequence[rt.HalDevice],
                      uris: Sequence[str]) -> rt.VmModule:
    """IREE's HAL module over `devices`, in the order given.

    IREE 3.13's Python runtime gives each device it creates a device group
    of its own, and a HAL module of several devices a new one, which a
    Vulkan device refuses to join ("Vulkan queue frontier already
    assigned"; local-task, local-sync and cuda accept it). Stock
    iree-run-module creates its devices as one group and is not affected.
    ``refused_device_set`` tells such a set from its URIs beforehand;
    test/e2e/test_vulkan.py keeps a canary of this.
    """
    try:
        return rt.create_hal_module(instance, devices=list(devices))
    except (RuntimeError, ValueError) as e:
        if "frontier already assigned" not in str(e):
            raise
        vulkan = [u for u in uris if driver_name(u) == "vulkan"]
        raise UnsupportedDeviceSet(
            f"IREE 3.13's Python runtime cannot open a Vulkan device ({', '.join(vulkan)}) beside "
            f"another device ({', '.join(u for u in uris if u not in vulkan)}): {_reason(e)}; "
            f"{_FALLBACK}") from None


def _reason(exc: BaseException) -> str:
    text = short(exc)
    # "Error creating driver: c/runtime/src/...c:66: UNAVAILABLE; msg" -> "UNAVAILABLE; msg"
    for code in ("UNAVAILABLE;", "NOT_FOUND;", "INVALID_ARGUMENT;", "INTERNAL;", "UNKNOWN;",
                 "FAILED_PRECONDITION;"):
        if code in text:
            return text[text.index(code):]
    return text


def bind(manifest: Manifest, uris: Sequence[str],
         used: Optional[Sequence[str]] = None) -> dict[str, int]:
    """Declared device name -> index into `uris`, as IREE's `__init` binds.

    ``used``: the declared devices the compiled program looks up in its
    `__init` (scan_declared_devices), None for all of them. IREE drops a
    device the program never uses (a `--place=auto` module that put
    nothing on its GPU), and stock iree-run-module then runs the module
    without a runtime device for it; so does the shim: such a device is
    left unbound when no given device matches it. With an mdc manifest the
    count must otherwise match: no more runtime devices than declared, and
    no fewer than the program uses. Devices scanned from a plain module
    may be incomplete (yet `local[1]` still needs two local devices), so
    there only the binding itself is checked.
    """
    needed = [d for d in manifest.devices if used is None or d.name in used]
    if manifest.source == MANIFEST_KEY and not len(needed) <= len(uris) <= len(manifest.devices):
        uses = ("" if len(needed) == len(manifest.devices) else
                f" and the program uses {len(needed)} of them ({', '.join(d.name for d in needed)})")
        raise ShimError(
            f"wrong device count: the module declares {len(manifest.devices)} device(s) "
            f"({manifest.describe()}){uses} but {len(uris)} runtime device(s) given "
            f"({', '.join(uris) or 'none'})")
    binding = {}
    for d in manifest.devices:
        matches = [i for i, uri in enumerate(uris) if kind_matches(d.kind, uri)]
        if d.ordinal >= len(matches):
            if used is not None and d.name not in used:
                continue  # never used: IREE's __init looks nothing up for it
            raise ShimError(
                f"declared device '{d.name}' ({d.spec}) has no matching runtime device: "
                f"the given devices ({', '.join(uris)}) include {len(matches)} '{d.kind}' device(s)")
        binding[d.name] = matches[d.ordinal]
    return binding


def check_staging(manifest: Manifest, binding: dict[str, int], uris: Sequence[str],
                  devices: Sequence[rt.HalDevice]) -> None:
    """Each staging owner must be a bound device able to give shared host memory."""
    check_staging_links(manifest, binding)
    for owner in sorted({s.owner for s in manifest.staging if s.owner is not None}):
        uri, device = uris[binding[owner]], devices[binding[owner]]
        if not _can_stage(device):
            raise ShimError(f"staging owner '{owner}' ({uri}) cannot allocate host-local, "
                            "device-visible, mappable memory")


def check_staging_links(manifest: Manifest, binding: dict[str, int]) -> None:
    """Each staging link names declared devices, and its owner a bound one
    (no device opened)."""
    for s in manifest.staging:
        for role, name in (("from", s.src), ("to", s.dst), ("via", s.via)):
            if name is not None and name not in binding:
                raise ShimError(f"staging link {s.src}->{s.dst}: '{role}' device '{name}' is not declared")
        if s.owner is not None and s.owner not in binding:
            raise ShimError(f"staging owner '{s.owner}' (link {s.src}->{s.dst}) is not among the "
                            f"given devices (declared: {', '.join(binding)})")


def _can_stage(device: rt.HalDevice) -> bool:
    allocator = device.allocator
    compat = allocator.query_buffer_compatibility(
        memory_type=int(STAGING_MEMORY), allowed_usage=int(STAGING_USAGE),
        intended_usage=int(STAGING_USAGE), allocation_size=4096)
    needed = int(rt.BufferCompatibility.ALLOCATABLE) | int(rt.BufferCompatibility.QUEUE_TRANSFER)
    if compat & needed != needed:
        return False
    try:  # a tiny allocation confirms what the query promised
        buffer = allocator.allocate_buffer(memory_type=int(STAGING_MEMORY),
                                           allowed_usage=int(STAGING_USAGE), allocation_size=64)
    except (RuntimeError, ValueError):
        return False
    want = int(rt.MemoryType.HOST_VISIBLE) | int(rt.MemoryType.DEVICE_VISIBLE)
    return buffer.memory_type() & want == want
