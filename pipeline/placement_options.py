"""mdc-compile's and mdc-opt's flags for automatic placement
(passes/transforms/assign_devices.py): ``--place``, ``--gpu-memory`` (a
size, or ``auto``), ``--place-profile``, ``--place-costs``,
``--place-objective`` and ``--max-dim``; how each is parsed and checked.
The one parser of sizes: mdc-compile, mdc-opt and the Python API all use
it."""

from __future__ import annotations

import os
import re
from fractions import Fraction

from mdc.contract.place_options import AUTO as PLACE_AUTO
from mdc.contract.place_options import AutoMemory
from mdc.contract.place_options import MANUAL as PLACE_MANUAL
from mdc.contract.place_options import OBJECTIVES as PLACE_OBJECTIVES
from mdc.passes.infra.diagnostics import UsageError

# Sizes (--gpu-memory, and gpu_memory= in the Python API), case-insensitive:
# a bare suffix K, M, G, T is binary (G = GiB = 2**30, as llama.cpp, torch
# and `free -g` users mean it), so are KiB ... TiB and Kubernetes' Ki ... Ti; KB ... TB are
# decimal (GB = 10**9, the SI's). The summary line prints the bytes
# understood, so a reader sees which one was meant. A size with no suffix,
# or B, is in bytes.
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGT](?:i?B|i)?|B)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,
               "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
SIZE_EXAMPLES = "e.g. 8G or 8GiB (8 x 2**30 bytes), 512M, 6GB (6 x 10**9 bytes) or 1000000"


def parse_size(flag: str, text) -> int:
    """Bytes of a size as ``--gpu-memory`` takes it: a whole number of
    bytes, or a number with a suffix, case-insensitive: K, M, G, T, Ki ...
    Ti and KiB, MiB, GiB, TiB are powers of 1024 (``8G`` is 8 GiB); KB, MB, GB, TB
    powers of 1000. Fractions are rounded down to whole bytes. The one
    parser of sizes: mdc-compile, mdc-opt and the Python API all use it."""
    if isinstance(text, int) and not isinstance(text, bool) and text >= 0:
        return text
    m = None if isinstance(text, bool) else _SIZE.match(str(text))
    if not m:
        raise UsageError(f"{flag}={text}: expected a size in bytes, {SIZE_EXAMPLES}")
    return int(Fraction(m.group(1)) * _SIZE_UNITS[(m.group(2) or "").lower()])


def parse_gpu_memory(text) -> "int | AutoMemory":
    """``--gpu-memory``: a size (parse_size), or ``auto`` (the machine
    profile's free memory less the default margin) or ``auto-SIZE`` (less
    SIZE), case-insensitive: contract/place_options.AutoMemory."""
    if isinstance(text, str) and text.strip().lower().startswith("auto"):
        rest = text.strip()[4:]
        if not rest:
            return AutoMemory(None, text.strip())
        if rest.startswith("-") and _SIZE.match(rest[1:]):
            return AutoMemory(parse_size("--gpu-memory", rest[1:]), text.strip())
        raise UsageError(f"--gpu-memory={text}: expected auto, or auto-SIZE for a margin of SIZE "
                         f"(e.g. auto-512MiB), or a size in bytes, {SIZE_EXAMPLES}")
    return parse_size("--gpu-memory", text)


# The names passes/assignment/bounds.py gives dynamic dimensions.
_DIM_NAME = re.compile(r"^(?:arg\d+|u\d+\.r\d+)\.d\d+$")


def parse_max_dim(text: str) -> tuple[str, int]:
    """``NAME=N`` of ``--max-dim`` (passes/assignment/bounds.py names the
    dimensions: ``argI.dJ``, ``uU.rR.dJ``)."""
    name, _, value = text.partition("=")
    if not name or not value.isdigit() or int(value) < 1:
        raise UsageError(f"--max-dim={text}: expected NAME=N with N a whole number above 0, e.g. --max-dim=arg0.d0=64")
    if not _DIM_NAME.match(name):
        raise UsageError(f"--max-dim={text}: '{name}' names no dimension: a name is argI.dJ (dimension J of argument "
                         "I, from 0) or uU.rR.dJ (of result R of unit U), e.g. --max-dim=arg0.d0=64")
    return name, int(value)


def max_dims_of(given) -> dict[str, int]:
    """``--max-dim`` flags (``["NAME=N", ...]``) or a mapping, as {name: bound};
    one name given two bounds is an error."""
    texts = [f"{name}={value}" for name, value in given.items()] if isinstance(given, dict) else given
    bounds: dict[str, int] = {}
    for text in texts:
        name, bound = parse_max_dim(text)
        if bounds.get(name, bound) != bound:
            raise UsageError(f"--max-dim={name}={bound} contradicts --max-dim={name}={bounds[name]}: give one bound")
        bounds[name] = bound
    return bounds


def placement_settings(opts) -> dict:
    """The placement flags of ``opts`` (driver.CompileOptions or the same
    keywords) as CompileSettings' fields: the size in bytes, the bounds
    by name."""
    memory = opts.gpu_memory
    return {"place": opts.place, "place_profile": opts.place_profile, "place_objective": opts.place_objective,
            "place_costs": opts.place_costs,
            "gpu_memory": None if memory is None else parse_gpu_memory(memory),
            "max_dims": max_dims_of(opts.max_dims)}


def check_placement(devices: list, place: str, gpu_memory, place_profile, place_objective: str, max_dims,
                    place_costs=None) -> None:
    """The placement flags (placement_settings) make sense together and
    with the devices."""
    if place_objective not in PLACE_OBJECTIVES:
        raise UsageError(f"--place-objective={place_objective}: expected latency or throughput")
    if place != PLACE_AUTO and gpu_memory is not None:
        raise UsageError("--gpu-memory needs --place=auto")
    if place == PLACE_MANUAL and max_dims:
        # Only --place reads the bounds: without it a bound would be ignored, and the run never checked.
        name, bound = next(iter(max_dims.items()))
        raise UsageError(f"--max-dim={name}={bound} needs --place=auto (or --place=FILE.json): "
                         "without --place no dimension is bounded")
    if place == PLACE_MANUAL:
        # The profile and the objective also give a file's assignment its estimates.
        for flag, given in (("--place-profile", place_profile), ("--place-costs", place_costs),
                            ("--place-objective", None if place_objective == "latency" else place_objective)):
            if given is not None:
                raise UsageError(f"{flag} needs --place=auto (or --place=FILE.json)")
        return
    if len(devices) != 2:
        raise UsageError(f"--place={place} needs exactly two devices, a host and an accelerator "
                         f"(got {len(devices)}): e.g. --device=cpu=local[0] --device=gpu=cuda[0]")
    for flag, path in (("--place", None if place == PLACE_AUTO else place), ("--place-profile", place_profile),
                       ("--place-costs", place_costs)):
        if path is not None and not os.path.exists(path):
            raise UsageError(f"{flag}={path}: no such file")


def add_placement_arguments(parser) -> None:
    """mdc-compile's and mdc-opt's flags for automatic placement."""
    parser.add_argument(
        "--place", default=PLACE_MANUAL, metavar="manual|auto|FILE.json",
        help="where each unit of work and each weight runs: manual (default: as the program says), auto "
        "(the fastest estimate under --gpu-memory; needs two devices, a local host and an accelerator), or "
        "the assignment in FILE.json (the shape of --report's \"placement\")")
    parser.add_argument("--gpu-memory", metavar="SIZE",
                        help="with --place=auto, the accelerator's memory budget: bytes, or with a suffix, "
                        "case-insensitive: K/M/G/T or KiB/MiB/GiB/TiB (powers of 1024: 8G is 8 GiB), "
                        "KB/MB/GB/TB (powers of 1000); or auto: the --place-profile's free memory of the "
                        "accelerator less 1 GiB (a tenth of it where that is less), auto-SIZE: less SIZE")
    parser.add_argument("--place-profile", metavar="FILE.json",
                        help="with --place (auto, or a file's estimates), the machine profile mdc-profile wrote "
                        "(default: the built-in one)")
    parser.add_argument("--place-costs", metavar="FILE.json",
                        help="with --place (auto, or a file's estimates), the program's own units and crossings "
                        "timed by mdc-profile --program: measured times where the file has them, the profile's "
                        "model elsewhere; a file measured for another program is refused")
    parser.add_argument("--place-objective", choices=PLACE_OBJECTIVES, default="latency",
                        help="with --place, the time of one call (latency, default) or per call of a stream "
                        "with two in flight (throughput)")
    parser.add_argument("--max-dim", action="append", default=[], metavar="NAME=N",
                        help="an upper bound for a dynamic dimension, for --place (argI.dJ: dimension J of "
                        "argument I; the error that asks for one names it); mdc-run and the Python API refuse a "
                        "call above an argument's bound")
