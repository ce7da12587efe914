"""mdc-compile's device and link options, and the IREE flags they become.

``--device=NAME=SPEC`` declares the device symbol ``NAME`` (``a`` is short
for ``device_a`` when the program uses ``@device_a`` and not ``@a``; a name
of digits ``N`` is short for ``__device_N``, the devices of an iree-turbine
export) as the IREE target device ``SPEC``  (``local[0]``, ``cuda[0]``, ``hip[0]``,
``vulkan[0]``...). Each becomes ``--iree-hal-target-device=NAME=SPEC``, in
the order given. The default device, where IREE puts values and work
without an affinity, is IREE's: ``--iree-hal-default-device=NAME`` where
given, else the device whose name sorts first (not the first given:
passes/module_facts.iree_default_device says why).

Per-backend defaults, each overridden by passing the same ``--iree-*`` flag:

* local: ``--iree-hal-local-target-device-backends=llvm-cpu`` and
  ``--iree-llvmcpu-target-cpu=host`` (right when compiling and running on one
  machine; for another machine name a CPU it has: ``x86-64-v3``, or
  ``generic`` for any x86-64, which gets no CPU code defaults);
* cuda: ``--iree-cuda-target=sm_80`` (sm_90 does not compile in 3.13.0; sm_80
  PTX runs on Hopper);
* hip: ``--iree-rocm-target=gfx942``.

A program with a local device that does work, compiled with llvm-cpu for a
CPU that is no portable baseline, also gets mdc's CPU code defaults
(``cpu_code_flags``): IREE's data tiling (``--iree-opt-data-tiling``) and
all of llvm-cpu's ukernels, which IREE 3.13 leaves off; ``--no-cpu-data-tiling``
(``cpu_data_tiling=False``) drops them. Data tiling is one flag for the whole
module: every matmul gets an encoding, and each device's executable target
resolves it (stream's specialize-encodings): a CPU's to packed tiles, cuda's
and vulkan's (which have no resolver) to the plain layout, which IREE then
drops. HIP has a data-tiling resolver of its own; mdc sets it to ``none``
(``--iree-rocm-encoding-layout-resolver=none``), so a GPU's code is what it
was without data tiling. A user's own data-tiling flag leaves all of it to
IREE. docs/DESIGN.md section 12.
"""

from __future__ import annotations

import dataclasses
import os
import re

from mdc.contract.manifest_record import Device
# UsageError is contract/errors.py's, so that a pass can raise it too; the
# pipeline's modules import it from here.
from mdc.passes.infra.diagnostics import MdcError, UsageError  # noqa: F401

# mdc-compile --compile-to's stages, in order (stages.py runs them; named
# here so that parsing the command line needs no IREE).
STAGE_NAMES = ["input", "flow", "stream-tensor", "mdc", "stream", "hal", "vm"]

_SPEC = re.compile(r"^([a-z][a-z0-9_-]*)(?:\[(\d+)\])?$")
_NAME = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_$.\-]*|[0-9]+)$")
_KNOWN_KINDS = ("local", "cuda", "hip", "vulkan", "metal", "webgpu")

BACKEND_DEFAULTS: dict[str, list[tuple[str, str]]] = {
    "local": [
        ("--iree-hal-local-target-device-backends", "llvm-cpu"),
        ("--iree-llvmcpu-target-cpu", "host"),
    ],
    "cuda": [("--iree-cuda-target", "sm_80")],
    "hip": [("--iree-rocm-target", "gfx942")],
}

# IREE's flags that turn data tiling on or off; a user who gives one of
# them gets no CPU code defaults from mdc (cpu_code_flags).
DATA_TILING_FLAGS = ("--iree-opt-data-tiling", "--iree-dispatch-creation-data-tiling",
                     "--iree-global-opt-data-tiling")
CPU_CODE_DEFAULTS: list[tuple[str, str]] = [
    ("--iree-opt-data-tiling", "true"),
    ("--iree-llvmcpu-enable-ukernels", "all"),
]
# Target CPUs for which mdc adds no CPU code defaults: x86-64 baselines
# without AVX2, where llvm-cpu's ukernels have no fast path (a 256x2048 by
# 2048x2048 f32 matmul took 2x to 8x longer data-tiled with them than
# without data tiling, docs/PERFORMANCE.md) and data tiling without them
# gains in one weight layout and loses in the other.
PORTABLE_CPUS = ("generic", "x86-64", "x86-64-v2")
# What keeps a GPU's code as it was without data tiling, by kind (cuda,
# vulkan: nothing; they resolve every encoding to the plain layout).
GPU_WITHOUT_DATA_TILING: dict[str, list[tuple[str, str]]] = {
    "hip": [("--iree-rocm-encoding-layout-resolver", "none")],
}


def parse_device(text: str) -> Device:
    """The device ``--device=NAME=SPEC`` declares, its spec as given."""
    if "=" not in text:
        raise UsageError(
            f"--device={text}: expected NAME=SPEC, e.g. --device=a=local[0]",
        )
    name, spec = text.split("=", 1)
    if not _NAME.match(name):
        raise UsageError(f"--device={text}: '{name}' is not a valid device name")
    m = _SPEC.match(spec)
    if not m:
        raise UsageError(
            f"--device={text}: '{spec}' is not a device spec",
            notes=["a spec is KIND or KIND[ORDINAL], e.g. local[0], cuda[0], hip[1]"],
        )
    kind = m.group(1)
    if kind not in _KNOWN_KINDS:
        raise UsageError(
            f"--device={text}: unknown device kind '{kind}'",
            notes=[f"known kinds: {', '.join(_KNOWN_KINDS)}"],
        )
    return Device(name, kind, int(m.group(2) or 0), given_spec=spec)


def parse_link(text: str) -> tuple[str, str, str]:
    m = re.match(r"^([^:=]+):([^:=]+)=(staged|shared)$", text)
    if not m:
        raise UsageError(
            f"--link={text}: expected X:Y=staged or X:Y=shared",
        )
    x, y, mode = m.groups()
    if x == y:
        raise UsageError(f"--link={text}: a device cannot link to itself")
    return x, y, mode


def resolve_names(
    devices: list[Device], referenced: dict[str, object]
) -> tuple[list[Device], list[tuple[Device, str]]]:
    """Maps short names (``a`` -> ``device_a``) onto the program's symbols.

    Returns the devices under their resolved names and, for each device the
    program never names, its flag and resolved name (``unnamed_warnings``
    says so). ``referenced`` maps each device symbol the program uses to
    the location of a first use.
    """
    resolved: list[Device] = []
    unnamed: list[tuple[Device, str]] = []
    seen: dict[str, str] = {}
    for d in devices:
        name = long_name(d.name)
        if name not in referenced and f"device_{name}" in referenced:
            name = f"device_{name}"
        if name in seen:
            raise UsageError(f"device '{name}' is given twice "
                             f"(--device={seen[name]} and --device={d.name}={d.spec_as_given})")
        seen[name] = f"{d.name}={d.spec_as_given}"
        if referenced and name not in referenced:
            unnamed.append((d, name))
        resolved.append(dataclasses.replace(d, name=name))
    return resolved, unnamed


# Past this many, the devices the program never names share one warning.
UNNAMED_LISTED = 3


def unnamed_warning(device: Device, name: str) -> str:
    return f"--device={device.name}={device.spec_as_given}: the program never names device '{name}'"


def unnamed_warnings(unnamed: list[tuple[Device, str]]) -> list[str]:
    """One warning per --device the program never names; more than
    UNNAMED_LISTED of them are one line that names the first few."""
    if len(unnamed) <= UNNAMED_LISTED:
        return [unnamed_warning(d, name) for d, name in unnamed]
    shown = ", ".join(f"'{name}'" for _, name in unnamed[:UNNAMED_LISTED])
    return [f"{len(unnamed)} --device flags give devices the program never names: {shown} "
            f"and {len(unnamed) - UNNAMED_LISTED} more"]


DEFAULT_DEVICE_FLAG = "--iree-hal-default-device"


def chosen_default_device(devices: list[Device], passthrough: list[str]) -> str | None:
    """The device a ``--iree-hal-default-device`` among the IREE flags
    names (the last one; digits ``N`` name ``__device_N``, as in IREE), or
    None where none is given. IREE takes any name and compiles a module
    whose default device does not exist, so a name that is not a declared
    device is refused."""
    given = [f.split("=", 1)[1] for f in passthrough if f.startswith(DEFAULT_DEVICE_FLAG + "=")]
    if not given:
        return None
    name = long_name(given[-1])
    names = [d.name for d in devices]
    if name not in names:
        raise UsageError(f"{DEFAULT_DEVICE_FLAG}={given[-1]} names no declared device "
                         f"(declared: {', '.join(names)}; give the full name)")
    return name


def long_name(name: str) -> str:
    """``__device_N`` for a name of digits ``N`` (iree-turbine names its
    devices ``@__device_0``, ``@__device_1``, ... after the monikers "0",
    "1"; no MLIR symbol is digits alone), else ``name``."""
    return f"__device_{name}" if name.isdigit() else name


def staging_hops(devices: list[Device], referenced: dict[str, object]) -> list[str]:
    """The local devices the program never names that mdc keeps as the host
    to stage through: when the devices it names are GPUs of two or more
    drivers and none is local, the first unnamed local device (moves between
    those GPUs pass through a local device's queue, which the program need
    not use itself)."""
    named = [d for d in devices if d.name in referenced]
    if any(d.kind == "local" for d in named) or len({d.kind for d in named}) < 2:
        return []
    hosts = [d.name for d in devices if d.kind == "local" and d.name not in referenced]
    return hosts[:1]


def names_and_hops(devices: list[Device], referenced: dict[str, object]) -> tuple[list[Device], list[str]]:
    """The devices' names resolved (resolve_names, without its warnings)
    and the local devices kept only to stage through (staging_hops)."""
    resolved, _ = resolve_names(devices, referenced)
    return resolved, staging_hops(resolved, referenced)


def resolve_link_names(
    links: list[tuple[str, str, str]], devices: list[Device]
) -> dict[frozenset, tuple[str, str | None, str]]:
    """Turns ``--link`` flags into the memory model's override map:
    {frozenset((X, Y)): (mode, owner or None, the flag as the user wrote it)}."""
    by_name = {d.name: d.name for d in devices}
    by_short = {d.name[len("device_"):]: d.name for d in devices if d.name.startswith("device_")}

    def canonical(n: str, flag: str) -> str:
        n = long_name(n)
        if n in by_name:
            return n
        if n in by_short:
            return by_short[n]
        raise UsageError(f"--link={flag}: no --device is named '{n}'")

    out: dict[frozenset, tuple[str, str | None, str]] = {}
    for x, y, mode in links:
        flag = f"{x}:{y}={mode}"
        cx, cy = canonical(x, flag), canonical(y, flag)
        key = frozenset((cx, cy))
        value = (mode, cy if mode == "staged" else None, flag)
        if key in out and out[key][:2] != value[:2]:
            raise UsageError(
                f"--link={flag} contradicts an earlier --link for the pair {cx}, {cy}",
            )
        out[key] = value
    return out


def add_codegen_arguments(parser) -> None:
    """mdc-compile's flags for the code mdc's passes steer IREE to generate."""
    parser.add_argument(
        "--no-cuda-matmul-configs", action="store_true",
        help="keep IREE's default CUDA code for every matmul (by default, matmuls that only a cuda "
        "device runs get measured tile configs: passes/targets/cuda/cuda_matmul_configs.py)")
    add_cuda_matmul_table_argument(parser)


def add_cuda_matmul_table_argument(parser) -> None:
    """mdc-compile's and mdc-opt's ``--cuda-matmul-table``."""
    parser.add_argument(
        "--cuda-matmul-table", metavar="FILE.json",
        help="the table of measured CUDA matmul configs to read instead of the shipped one "
        "(passes/targets/cuda/matmul_table.json): one `python -m bench tune pick -o FILE.json` wrote")


def codegen_settings(opts) -> dict:
    """The codegen flags of ``opts`` (driver.CompileOptions) as CompileSettings' fields."""
    return {"cuda_matmul_configs": opts.cuda_matmul_configs, "cuda_matmul_table": opts.cuda_matmul_table}


def check_cuda_matmul_table(path) -> None:
    """``--cuda-matmul-table``'s file can be read as a table (None: the shipped one)."""
    if path is None:
        return
    from mdc.passes.targets.cuda.matmul_table import TableError, table_at

    try:
        table_at(os.fspath(path))
    except TableError as e:
        raise UsageError(f"--cuda-matmul-table={path}: {e.why}") from None


def add_cpu_code_arguments(parser) -> None:
    """mdc-compile's flag for its CPU code defaults (cpu_code_flags)."""
    parser.add_argument(
        "--no-cpu-data-tiling", action="store_true",
        help="keep IREE's own defaults for a local device's code (by default mdc-compile adds "
        "--iree-opt-data-tiling and --iree-llvmcpu-enable-ukernels=all, and keeps a hip device's "
        "layouts as without data tiling: docs/mdc-compile.md)")


def iree_flags(devices: list[Device], passthrough: list[str], cpu_data_tiling: bool = True,
               hops: list[str] = ()) -> list[str]:
    """The IREE flags mdc derives: target devices, backend defaults the user
    did not override, mdc's CPU code defaults unless ``cpu_data_tiling`` is
    False (cpu_code_flags), then the user's own ``--iree-*`` flags.
    ``hops``: the local devices kept only to stage between GPUs
    (staging_hops), which do no work of the program's."""
    flags = [f"--iree-hal-target-device={d.name}={d.spec_as_given}" for d in devices]
    given = {f.split("=", 1)[0] for f in passthrough}
    kinds = []
    for d in devices:
        if d.kind not in kinds:
            kinds.append(d.kind)
    for kind in kinds:
        for flag, value in BACKEND_DEFAULTS.get(kind, []):
            if flag not in given:
                flags.append(f"{flag}={value}")
    if cpu_data_tiling:
        flags += cpu_code_flags(devices, passthrough, hops)
    return flags + list(passthrough)


def cpu_code_flags(devices: list[Device], passthrough, hops=()) -> list[str]:
    """mdc's CPU code defaults for a module of ``devices``, where a local one
    does work (``hops`` do none), the user's own IREE flags ``passthrough``:
    data tiling and every llvm-cpu ukernel, and for each GPU kind whose
    resolver would data-tile its code too, the resolver set to the plain
    layout. None where the user gives a data-tiling flag of their own, where
    the local code is not llvm-cpu's, or where the target CPU is a portable
    baseline (PORTABLE_CPUS)."""
    kinds = list(dict.fromkeys(d.kind for d in devices if d.name not in hops))
    given = dict(f.split("=", 1) if "=" in f else (f, "") for f in passthrough)
    backends = given.get("--iree-hal-local-target-device-backends", "llvm-cpu").split(",")
    if "local" not in kinds or given.keys() & set(DATA_TILING_FLAGS) or "llvm-cpu" not in backends \
            or given.get("--iree-llvmcpu-target-cpu", "host") in PORTABLE_CPUS:
        return []
    defaults = CPU_CODE_DEFAULTS + [d for kind in kinds for d in GPU_WITHOUT_DATA_TILING.get(kind, [])]
    return [f"{flag}={value}" for flag, value in defaults if flag not in given]
