"""The corpus of programs "in the shapes other people write"
(test/e2e/programs/external/): what each program's header says, its seeded
inputs, and the device sets it is compiled for.

Each program starts with comment lines the harnesses read:

    // devices: dev_z dev_a      the --device order (the first is local[0], ...)
    // declared: dev_cpu dev_gpu the devices the program declares itself (optional)
    // call: NAME                the public function to call
    // inputs: 4xf32 i1          one type per argument, tensors as SHAPExTYPE

Used by test_external_shapes.py (local + lavapipe, and staged CPU pairs)
and gpu_external.py (local + cuda, built here and run on a GPU machine);
needs numpy only, never the compiler or the runtime.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass

import numpy as np

from . import paths

PROGRAMS = os.path.join(paths.PROGRAMS, "external")

_DTYPES = {"f32": np.float32, "i32": np.int32, "i64": np.int64, "i1": np.bool_, "index": np.int64}
_HEADER = re.compile(r"^// (devices|declared|call|inputs): *(.*)$", re.M)
_DECLARATION = re.compile(r'(util\.global private @(\w+) = )#hal\.device\.alias<"\w+"\[\d+\]>')


@dataclass(frozen=True)
class Program:
    name: str
    path: str
    devices: tuple[str, ...]
    declared: tuple[str, ...]
    function: str
    inputs: tuple[str, ...]

    def text(self) -> str:
        with open(self.path) as f:
            return f.read()


def _read(path: str) -> Program:
    with open(path) as f:
        fields = {key: value.split() for key, value in _HEADER.findall(f.read())}
    name = os.path.splitext(os.path.basename(path))[0]
    missing = [k for k in ("devices", "call", "inputs") if k not in fields]
    if missing:
        raise ValueError(f"{path}: header lacks '// {missing[0]}:'")
    return Program(name, path, tuple(fields["devices"]), tuple(fields.get("declared", ())),
                   fields["call"][0], tuple(fields["inputs"]))


def programs() -> list[Program]:
    return [_read(os.path.join(PROGRAMS, f)) for f in sorted(os.listdir(PROGRAMS)) if f.endswith(".mlir")]


def _input(spec: str, rng: np.random.Generator):
    dims, dtype = re.fullmatch(r"((?:\d+x)*)(\w+)", spec).groups()
    shape = tuple(int(d) for d in dims.split("x") if d)
    np_type = _DTYPES[dtype]
    if dtype == "i1":
        return np.array(rng.integers(0, 2, shape).astype(np.bool_))
    if dtype == "index":
        return np.array(rng.integers(1, 5, shape), np_type)
    if np.issubdtype(np_type, np.integer):
        return np.array(rng.integers(-50, 50, shape), np_type)
    return np.array(rng.standard_normal(shape), np_type)


def inputs(program: Program, seed: int) -> list[np.ndarray]:
    """The program's arguments, drawn from `seed` (rank-0 arrays for scalars)."""
    rng = np.random.default_rng([seed, *program.name.encode()])
    return [_input(spec, rng) for spec in program.inputs]


def with_gpu(program: Program, gpu: str, kind: str) -> list[str]:
    """--device values: `gpu` as `kind`[0], the others local[0], local[1], ...
    in the program's --device order."""
    locals_ = iter(range(len(program.devices)))
    return [f"{d}={kind}[0]" if d == gpu else f"{d}=local[{next(locals_)}]" for d in program.devices]


def all_local(program: Program) -> list[str]:
    return [f"{d}=local[{i}]" for i, d in enumerate(program.devices)]


def staged_pairs(program: Program) -> list[tuple[str, str]]:
    """Every ordered pair of the program's devices (X:Y=staged, Y owning
    the staging memory)."""
    return list(itertools.permutations(program.devices, 2))


def source(program: Program, device_values: list[str]) -> str:
    """The program's text for these --device values: a device the program
    declares itself gets the same kind and ordinal in its declaration."""
    specs = dict(v.split("=", 1) for v in device_values)

    def redeclare(m: re.Match) -> str:
        kind, ordinal = specs[m.group(2)].rstrip("]").split("[")
        return f'{m.group(1)}#hal.device.alias<"{kind}"[{ordinal}]>'

    return _DECLARATION.sub(redeclare, program.text())


def runtime_devices(device_values: list[str], gpu_uri: str) -> list[str]:
    """Runtime devices for these --device values: one CPU device per local
    ordinal (local-task, then local-sync, then local-task), then the GPU."""
    cpus = ["local-task", "local-sync", "local-task"]
    count = sum("=local[" in v for v in device_values)
    return cpus[:count] + ([gpu_uri] if count < len(device_values) else [])


def iree_run_inputs(values: list[np.ndarray], directory: str, stem: str) -> list[str]:
    """iree-run-module --input flags: scalars inline, tensors as .npy files."""
    flags = []
    for i, value in enumerate(values):
        if value.ndim == 0:
            flags.append(f"--input={int(value) if value.dtype == np.bool_ else value.item()}")
            continue
        path = os.path.join(directory, f"{stem}.in{i}.npy")
        np.save(path, value)
        flags.append(f"--input=@{path}")
    return flags


def same(got: np.ndarray, want: np.ndarray) -> str:
    """'' when `got` matches `want` (integers exactly, floats to rounding:
    other devices fuse and order the arithmetic differently), else what
    differs."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{got.shape} != {want.dtype}{want.shape}"
    if want.dtype.kind == "f":
        ok = np.allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        ok = np.array_equal(got, want)
    return "" if ok else f"values differ: got {got.ravel()[:8].tolist()} want {want.ravel()[:8].tolist()}"
