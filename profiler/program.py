"""``mdc-profile --program``, the compiling half: a program's own units
(program_units.py) compiled for each of its devices into a kit that
``--program-kit=DIR`` times with the runtime alone (program_timing.py).

The program is read as ``mdc-compile --place`` reads it: IREE's input
phase (``--compile-to=input``), then, per public function in program order,
the weights made of inline tables and of weight-only work
(assignment/constants.py, hoist.py) and the work graph (extract.py). Each
unit becomes a function of one module per device, which is compiled by
mdc for that one device with mdc-compile's own defaults (its CPU data
tiling, its cuda matmul configs) and ``--iree-*`` flags given here; units
whose functions print alike (a transformer's repeated blocks) share one.
Every module also holds probes.py's @identity, @tiny and @chain, for the
fixed costs of a call and a dispatch. DIR holds the modules, their
sources (``units.mlir``, the host's; ``units_NAME.mlir``, the
accelerator NAME's) and the index ``program.json``::

    {"format": "mdc-profile-program", "version": 1, "source": "X.mlir",
     "functions": {"main": "<graph digest>"}, "target_cpu": "generic", "iree_flags": [...],
     "devices": {"cpu": {"target": "local[0]", "kind": "local", "uri": "local-task",
                         "module": "cpu.vmfb", "dropped": {}, "copies": 1, "own_arguments": false}, ...},
     "host": "cpu", "accelerator": "gpu",
     "units": [{"function": "main", "id": 0, "op": "linalg.matmul", "label": "...",
                "symbol": "u0", "arguments": [[[16, 64], "float32"], ...], "at_bound": false}],
     "crossings": [4096, 8192, ...]}

``copies``: on the host 1, each unit's function ``uN`` alone; on the
accelerator ACCELERATOR_COPIES: its module holds ``uN`` and ``uN_copies``,
one copy of the unit and that many in one call (``own_arguments``: each
copy reading a set of arguments of its own), each returning that many
sets of results, compiled with serial partitioning (program_units.py
says why; the accelerator's kernels are compiled once a copy, so its
module takes about that many times as long to build). ``crossings``: the
bytes of every value and weight that could cross between the host and the
accelerator, each timed both ways. Where a device's module does not
compile, each function is compiled alone and those that fail are left out
of it (the device's ``dropped``, with the compiler's first line): their
units are modelled on that device, as are those of an accelerator's
``uN`` whose ``uN_copies`` failed.
"""

from __future__ import annotations

import json
import os
import re
from typing import Mapping, Sequence

from mdc.contract.atomic_write import write_atomically

from . import probes

INDEX = "program.json"
FORMAT = "mdc-profile-program"
VERSION = 1
_TARGET = re.compile(r"^([a-z]+)(?:\[(\d+)\])?$")
# Copies of each unit in one call of the accelerator's ``uN_copies``
# (program_units.py says why); program_timing.py divides by them.
ACCELERATOR_COPIES = 8
# IREE's serial partitioning: each dispatch of a submission waits for the one before.
SERIAL_MODULE = 'module attributes {stream.partitioning = #stream.partitioning_config<"debug">} {'
_COPIES_SUFFIX = "_copies"


def copies_symbol(symbol: str) -> str:
    """The name of the function that runs ACCELERATOR_COPIES copies of unit
    function ``symbol``."""
    return symbol + _COPIES_SUFFIX


def unit_symbol(name: str) -> str:
    """The unit function a kit's function ``name`` times (``uN`` of both
    ``uN`` and ``uN_copies``)."""
    return name.removesuffix(_COPIES_SUFFIX)


class ProgramError(Exception):
    """A program, device or kit that cannot be measured (one line)."""


def runtime_uri(target: str) -> str:
    """The runtime device of an mdc-compile device spec: local[0] ->
    local-task, cuda[1] -> cuda://1."""
    m = _TARGET.match(target)
    if not m:
        raise ProgramError(f"'{target}' is not a device spec (local[0], cuda[0], vulkan[0], hip[0])")
    kind, ordinal = m.group(1), int(m.group(2) or 0)
    if kind == "local":
        return "local-task"
    return kind if ordinal == 0 else f"{kind}://{ordinal}"


def parse_devices(given: Sequence[str]) -> dict[str, str]:
    """``NAME=SPEC`` flags -> {name: spec}, in order."""
    devices = {}
    for text in given:
        name, eq, spec = text.partition("=")
        if not eq or not name or not spec:
            raise ProgramError(f"--device={text}: with --program a device is NAME=SPEC, as mdc-compile takes it "
                               "(--device=cpu=local[0] --device=gpu=cuda[0])")
        runtime_uri(spec)
        devices[name] = spec
    if len(devices) != 2:
        raise ProgramError(f"--program needs two --device=NAME=SPEC, a local host and an accelerator, as "
                           f"mdc-compile --place takes them (got {len(devices)})")
    return devices


def read_program(path: str, devices: Mapping[str, str], max_dims: Mapping[str, int]):
    """(Compiler, module, host, accelerator, [(ReadFunction, dims_of)])
    of each public function of ``path``, as assign-devices reads them."""
    from mdc.passes.assignment import bounds as bnd
    from mdc.passes.assignment.constants import hoist_constants
    from mdc.passes.assignment.extract import read_function
    from mdc.passes.assignment.hoist import hoist_weight_work
    from mdc.passes.transforms.assign_devices import host_and_accelerator, public_functions
    from mdc.pipeline import driver
    from mdc.pipeline.ireec import Compiler

    result = driver.compile(path, [f"{n}={s}" for n, s in devices.items()], compile_to="input",
                            host_entry_points=False, result_storage_twins=False, generate_entry_point=False,
                            manifest=False)
    host, accelerator = host_and_accelerator({d.name: d for d in result.devices})
    compiler = Compiler([])
    module = compiler.parse_text(result.text, path)
    read = []
    with compiler.context, module.location:
        for function in public_functions(module):
            hoist_constants(module, function)
            hoist_weight_work(module, function)
            one = read_function(function, host, accelerator, max_dims)
            b = bnd.Bounds(one.parts.boundary.arguments, max_dims, lambda v: None, lambda v: None)
            read.append((one, b.dims))
    return compiler, module, host, accelerator, read


def _units_module(compiler, module, read: list):
    """({symbol: the host's function text}, {symbol and SYMBOL_copies: the
    accelerator's}, index entries of the units, the graphs' digests): each
    unit written once per distinct function text (see the module's doc)."""
    from iree.compiler import ir

    from mdc.passes.assignment.measured import graph_digest
    from mdc.passes.ir import ir_adapter as irx

    from .program_units import write_unit

    entries, seen, accelerator = [], {}, {}
    with compiler.context, module.location:
        units, scratch = ir.Module.create(), ir.Module.create()
        block = units.body
        for one, dims_of in read:
            graph, parts = one.graph, one.parts
            for unit in graph.units:
                if unit.op_class == "view" or unit.pinned:
                    continue
                op = parts.units[unit.id]
                symbol = f"u{len(entries)}"
                written = write_unit(op, parts.sources, symbol, dims_of, block)
                if written is None:
                    continue
                function = list(block.operations)[-1].operation
                key = str(function).replace(f"@{symbol}(", "@(", 1)
                if key in seen:
                    function.erase()
                    symbol = seen[key]
                else:
                    seen[key] = symbol
                    for name, copies in ((symbol, 1), (copies_symbol(symbol), ACCELERATOR_COPIES)):
                        write_unit(op, parts.sources, name, dims_of, scratch.body, copies, ACCELERATOR_COPIES,
                                   own_arguments=True)
                        accelerator[name] = str(list(scratch.body.operations)[-1].operation)
                entries.append({"function": graph.function, "id": unit.id, "op": op.name, "label": unit.label,
                                "symbol": symbol, "arguments": [[list(s), d] for s, d in written.arguments],
                                "at_bound": written.at_bound})
        units.operation.verify()
        # Each function printed alone is whole (its affine maps inline), so a module of any of them can be made.
        functions = {irx.symbol_name(op): str(op) for op in irx.top_level_ops(units.operation)}
        scratch.operation.verify()
    digests = {one.graph.function: graph_digest(one.graph) for one, _ in read}
    return functions, accelerator, entries, digests


def _module_text(functions: Mapping[str, str], serial: bool = False) -> str:
    """A module of ``functions`` and the fixed-cost probes (``serial``:
    with IREE's serial partitioning)."""
    head = SERIAL_MODULE if serial else "module {"
    return "\n".join([head, *functions.values(), *probes.fixed_cost_functions(), "}", ""])


def _compile_dropping(functions: dict, compile_one, serial: bool = False) -> tuple[bytes, dict[str, str]]:
    """(the module of ``functions`` compiled by ``compile_one(text)``, {symbol
    left out: why}): where the whole module fails, each function is
    compiled alone and those that fail are left out (the model estimates
    their units on this device)."""
    from mdc.runtime_shim.errors import short

    try:
        return compile_one(_module_text(functions, serial)), {}
    except Exception as whole:
        dropped = {}
        for symbol, text in functions.items():
            try:
                compile_one(_module_text({symbol: text}, serial))
            except Exception as e:
                dropped[symbol] = short(e)
        if not dropped or len(dropped) == len(functions):  # the module's own failure, not a unit's
            raise whole
        kept = {s: t for s, t in functions.items() if s not in dropped}
        return compile_one(_module_text(kept, serial)), dropped


def _crossing_sizes(read: list) -> list[int]:
    sizes = set()
    for one, _ in read:
        sizes.update(e.bytes for e in one.graph.edges)
        sizes.update(w.bytes for w in one.graph.weights)
    return sorted(s for s in sizes if s > 0)


def _compile_flags(kind: str, target_cpu: str, iree_flags: Sequence[str]) -> list[str]:
    cpu = [f"--iree-llvmcpu-target-cpu={target_cpu}"] if kind == "local" else []
    return [*cpu, *iree_flags]


def build(directory: str, path: str, devices: Mapping[str, str], max_dims: Mapping[str, int],
          target_cpu: str, iree_flags: Sequence[str] = ()) -> list[str]:
    """Writes the kit of ``path`` into ``directory``; the files written."""
    from mdc.pipeline import driver

    compiler, module, host, accelerator, read = read_program(path, devices, max_dims)
    on_host, on_accelerator, entries, digests = _units_module(compiler, module, read)
    os.makedirs(directory, exist_ok=True)
    written = []
    index_devices = {}
    for name, spec in devices.items():
        kind = _TARGET.match(spec).group(1)
        copies = ACCELERATOR_COPIES if name == accelerator else 1
        functions = on_accelerator if copies > 1 else on_host
        source = os.path.join(directory, f"units_{name}.mlir" if copies > 1 else "units.mlir")
        write_atomically(source, _module_text(functions, serial=copies > 1).encode())
        written.append(source)

        def compile_one(text: str) -> bytes:
            # Ordinal 0: the timing run opens this device alone, as the module's one device.
            return driver.compile(driver.MlirText(text, source), [f"{name}={kind}[0]"], manifest=False,
                                  host_entry_points=False, result_storage_twins=False,
                                  generate_entry_point=False, iree_flags=_compile_flags(kind, target_cpu, iree_flags)).vmfb

        vmfb, dropped = _compile_dropping(functions, compile_one, serial=copies > 1)
        file = f"{name}.vmfb"
        write_atomically(os.path.join(directory, file), vmfb)
        written.append(os.path.join(directory, file))
        index_devices[name] = {"target": spec, "kind": kind, "uri": runtime_uri(spec), "module": file,
                               "dropped": dropped, "copies": copies, "own_arguments": copies > 1}
    index = {"format": FORMAT, "version": VERSION, "source": os.path.abspath(path), "functions": digests,
             "target_cpu": target_cpu, "iree_flags": list(iree_flags), "max_dims": dict(max_dims),
             "devices": index_devices, "host": host, "accelerator": accelerator, "units": entries,
             "crossings": _crossing_sizes(read)}
    write_atomically(os.path.join(directory, INDEX), (json.dumps(index, indent=1) + "\n").encode())
    written.append(os.path.join(directory, INDEX))
    return written


def load_index(directory: str) -> dict:
    """The kit's index; ProgramError where DIR is not a kit this mdc made."""
    path = os.path.join(directory, INDEX)
    try:
        with open(path, encoding="utf-8") as f:
            index = json.load(f)
    except FileNotFoundError:
        raise ProgramError(f"{directory} is not a program kit (no {INDEX}): build one with "
                           f"mdc-profile --program=X.mlir --device=... --build-program={directory}") from None
    except (OSError, ValueError) as e:
        raise ProgramError(f"{path}: cannot read it ({e})") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT or index.get("version") != VERSION:
        raise ProgramError(f"{path}: not a program kit of this mdc (format {FORMAT} version {VERSION})")
    for name, d in index["devices"].items():
        if not os.path.exists(os.path.join(directory, d["module"])):
            raise ProgramError(f"{directory}: the module of device '{name}', {d['module']}, is missing")
    return index
