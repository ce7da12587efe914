"""A typed layer over IREE's Python IR (``iree.compiler.ir``): the one place
mdc's passes learn what an op is, what an attribute says, and how a new
symbol is named.

* op names: one constant per op mdc reads (``UTIL_CALL``), the families it
  treats alike (``FUNCTIONS``, ``CALLS``, ``RETURNS``, ``BRANCHES``), and
  predicates over them (``is_function``, ``is_transfer``, ...);
* functions: ``visibility``/``is_public`` (a function without
  ``sym_visibility`` is public);
* affinities: ``affinity_of(op)`` reads an op's affinity as an ``Affinity``
  (the device symbols it names), ``affinity_attr(device)`` builds one;
* printed attributes: IREE exposes no Python classes for its dialects'
  attributes (``#hal.device.target``, ``#hal.device.affinity``,
  ``#hal.executable.target``), so their printed forms are read here, once,
  behind typed functions, and nowhere else;
* symbols: ``SymbolNames`` reads a module's top-level symbol names once and
  makes unique ones from them.
"""

from __future__ import annotations

import dataclasses
import re

from typing import Iterator

from iree.compiler import ir

# -- op names -------------------------------------------------------------------

ARITH_ADDF = "arith.addf"
ARITH_ADDI = "arith.addi"
ARITH_CONSTANT = "arith.constant"
ARITH_INDEX_CAST = "arith.index_cast"
ARITH_MAXSI = "arith.maxsi"
ARITH_MULF = "arith.mulf"
ARITH_MULI = "arith.muli"
ARITH_SELECT = "arith.select"
CF_BR = "cf.br"
CF_COND_BR = "cf.cond_br"
FLOW_EXECUTABLE = "flow.executable"
FLOW_TENSOR_BITCAST = "flow.tensor.bitcast"
FLOW_TENSOR_RESHAPE = "flow.tensor.reshape"
FLOW_TENSOR_SLICE = "flow.tensor.slice"
FLOW_TENSOR_TRANSFER = "flow.tensor.transfer"
FLOW_TENSOR_UPDATE = "flow.tensor.update"
FUNC_CALL = "func.call"
FUNC_FUNC = "func.func"
FUNC_RETURN = "func.return"
HAL_ALLOCATOR_ALLOCATE = "hal.allocator.allocate"
HAL_ALLOCATOR_IMPORT = "hal.allocator.import"
HAL_ALLOCATOR_RESOLVE_MEMORY_PROPERTIES = "hal.allocator.resolve_memory_properties"
HAL_ALLOCATOR_SELECT = "hal.allocator.select"
HAL_BUFFER_ASSERT = "hal.buffer.assert"
HAL_BUFFER_SUBSPAN = "hal.buffer.subspan"
HAL_BUFFER_VIEW_BUFFER = "hal.buffer_view.buffer"
HAL_BUFFER_VIEW_CREATE = "hal.buffer_view.create"
HAL_BUFFER_VIEW_DIM = "hal.buffer_view.dim"
HAL_COMMAND_BUFFER_CREATE = "hal.command_buffer.create"
HAL_COMMAND_BUFFER_DEVICE = "hal.command_buffer.device"
HAL_DEVICE_ALLOCATOR = "hal.device.allocator"
HAL_DEVICE_QUERY = "hal.device.query"
HAL_DEVICE_QUEUE_ALLOCA = "hal.device.queue.alloca"
HAL_DEVICE_QUEUE_DEALLOCA = "hal.device.queue.dealloca"
HAL_EXECUTABLE = "hal.executable"
HAL_EXECUTABLE_BINARY = "hal.executable.binary"
HAL_EXECUTABLE_CREATE = "hal.executable.create"
HAL_EXECUTABLE_VARIANT = "hal.executable.variant"
HAL_FENCE_CREATE = "hal.fence.create"
HAL_FENCE_JOIN = "hal.fence.join"
HAL_MEMORY_TYPE = "hal.memory_type"
HAL_TENSOR_BARRIER = "hal.tensor.barrier"
HAL_TENSOR_EXPORT = "hal.tensor.export"
HAL_TENSOR_IMPORT = "hal.tensor.import"
LINALG_BATCH_MATMUL = "linalg.batch_matmul"
LINALG_BATCH_MATMUL_TRANSPOSE_A = "linalg.batch_matmul_transpose_a"
LINALG_BATCH_MATMUL_TRANSPOSE_B = "linalg.batch_matmul_transpose_b"
LINALG_BATCH_MATVEC = "linalg.batch_matvec"
LINALG_BATCH_REDUCE_MATMUL = "linalg.batch_reduce_matmul"
LINALG_BATCH_VECMAT = "linalg.batch_vecmat"
LINALG_BROADCAST = "linalg.broadcast"
LINALG_CONTRACT = "linalg.contract"
LINALG_COPY = "linalg.copy"
LINALG_DOT = "linalg.dot"
LINALG_FILL = "linalg.fill"
LINALG_GENERIC = "linalg.generic"
LINALG_MATMUL = "linalg.matmul"
LINALG_MATMUL_TRANSPOSE_A = "linalg.matmul_transpose_a"
LINALG_MATMUL_TRANSPOSE_B = "linalg.matmul_transpose_b"
LINALG_MATVEC = "linalg.matvec"
LINALG_REDUCE = "linalg.reduce"
LINALG_SOFTMAX = "linalg.softmax"
LINALG_TRANSPOSE = "linalg.transpose"
LINALG_VECMAT = "linalg.vecmat"
LINALG_YIELD = "linalg.yield"
ML_PROGRAM_GLOBAL = "ml_program.global"
SCF_CONDITION = "scf.condition"
SCF_EXECUTE_REGION = "scf.execute_region"
SCF_FOR = "scf.for"
SCF_IF = "scf.if"
SCF_INDEX_SWITCH = "scf.index_switch"
SCF_WHILE = "scf.while"
SCF_YIELD = "scf.yield"
STREAM_ASYNC_CAST = "stream.async.cast"
STREAM_ASYNC_CLONE = "stream.async.clone"
STREAM_ASYNC_CONSTANT = "stream.async.constant"
STREAM_ASYNC_DISPATCH = "stream.async.dispatch"
STREAM_ASYNC_SLICE = "stream.async.slice"
STREAM_ASYNC_TRANSFER = "stream.async.transfer"
STREAM_ASYNC_UPDATE = "stream.async.update"
STREAM_CMD_DISPATCH = "stream.cmd.dispatch"
STREAM_CMD_EXECUTE = "stream.cmd.execute"
STREAM_EXECUTABLE = "stream.executable"
STREAM_FILE_READ = "stream.file.read"
STREAM_FILE_WRITE = "stream.file.write"
STREAM_RESOURCE_ALLOC = "stream.resource.alloc"
STREAM_RESOURCE_ALLOCA = "stream.resource.alloca"
STREAM_RESOURCE_DEALLOCA = "stream.resource.dealloca"
STREAM_TENSOR_CONSTANT = "stream.tensor.constant"
STREAM_TENSOR_DISPATCH = "stream.tensor.dispatch"
STREAM_TENSOR_EMPTY = "stream.tensor.empty"
STREAM_TENSOR_EXPORT = "stream.tensor.export"
STREAM_TENSOR_FILL = "stream.tensor.fill"
STREAM_TENSOR_IMPORT = "stream.tensor.import"
STREAM_TENSOR_SIZEOF = "stream.tensor.sizeof"
STREAM_TENSOR_SPLAT = "stream.tensor.splat"
STREAM_TIMEPOINT_AWAIT = "stream.timepoint.await"
STREAM_TIMEPOINT_BARRIER = "stream.timepoint.barrier"
STREAM_TIMEPOINT_CHAIN_EXTERNAL = "stream.timepoint.chain_external"
STREAM_TIMEPOINT_IMMEDIATE = "stream.timepoint.immediate"
STREAM_TIMEPOINT_IMPORT = "stream.timepoint.import"
STREAM_TIMEPOINT_JOIN = "stream.timepoint.join"
TENSOR_BITCAST = "tensor.bitcast"
TENSOR_CAST = "tensor.cast"
TENSOR_COLLAPSE_SHAPE = "tensor.collapse_shape"
TENSOR_CONCAT = "tensor.concat"
TENSOR_DIM = "tensor.dim"
TENSOR_EMPTY = "tensor.empty"
TENSOR_EXPAND_SHAPE = "tensor.expand_shape"
TENSOR_EXTRACT = "tensor.extract"
TENSOR_EXTRACT_SLICE = "tensor.extract_slice"
TENSOR_GATHER = "tensor.gather"
TENSOR_INSERT_SLICE = "tensor.insert_slice"
TENSOR_PAD = "tensor.pad"
TENSOR_RESHAPE = "tensor.reshape"
TENSOR_SCATTER = "tensor.scatter"
UTIL_CALL = "util.call"
UTIL_FUNC = "util.func"
UTIL_GLOBAL = "util.global"
UTIL_GLOBAL_LOAD = "util.global.load"
UTIL_GLOBAL_LOAD_INDIRECT = "util.global.load.indirect"
UTIL_GLOBAL_STORE = "util.global.store"
UTIL_INITIALIZER = "util.initializer"
UTIL_LIST_SET = "util.list.set"
UTIL_OPTIMIZATION_BARRIER = "util.optimization_barrier"
UTIL_RETURN = "util.return"
UTIL_STATUS_CHECK_OK = "util.status.check_ok"

# The prefixes of op families mdc reads by prefix.
HAL_DEVICE_QUEUE_PREFIX = "hal.device.queue."
HAL_COMMAND_BUFFER_PREFIX = "hal.command_buffer."
LINALG_CONV_PREFIXES = ("linalg.conv", "linalg.depthwise_conv")
STREAM_RESOURCE_OP_PREFIXES = ("stream.tensor.", "stream.async.")

# The families mdc treats alike.
FUNCTIONS = (FUNC_FUNC, UTIL_FUNC)
CALLS = (FUNC_CALL, UTIL_CALL)
RETURNS = (FUNC_RETURN, UTIL_RETURN)
BRANCHES = (CF_BR, CF_COND_BR)
LOOPS = (SCF_FOR, SCF_WHILE)
GLOBALS = (UTIL_GLOBAL, ML_PROGRAM_GLOBAL)
EXECUTABLES = (STREAM_EXECUTABLE, HAL_EXECUTABLE, FLOW_EXECUTABLE)
DISPATCHES = (STREAM_TENSOR_DISPATCH, STREAM_ASYNC_DISPATCH, STREAM_CMD_DISPATCH)


def is_function(op: ir.Operation) -> bool:
    """A ``func.func`` or ``util.func``."""
    return op.name in FUNCTIONS


def is_call(op: ir.Operation) -> bool:
    """A ``func.call`` or ``util.call``."""
    return op.name in CALLS


def is_return(op: ir.Operation) -> bool:
    """A ``func.return`` or ``util.return``."""
    return op.name in RETURNS


def is_branch(op: ir.Operation) -> bool:
    """A ``cf.br`` or ``cf.cond_br``."""
    return op.name in BRANCHES


def is_loop(op: ir.Operation) -> bool:
    """An ``scf.for`` or ``scf.while``."""
    return op.name in LOOPS


def is_transfer(op: ir.Operation) -> bool:
    """A ``stream.async.transfer``: a value moved (or cast) between devices."""
    return op.name == STREAM_ASYNC_TRANSFER


def is_initializer(op: ir.Operation) -> bool:
    return op.name == UTIL_INITIALIZER


def is_executable(op: ir.Operation) -> bool:
    """A stream, hal or flow executable (a kernel, not the program)."""
    return op.name in EXECUTABLES


def is_device_global(op: ir.Operation) -> bool:
    """A ``util.global`` of type ``!hal.device``."""
    return op.name == UTIL_GLOBAL and str(op.attributes["type"]) == "!hal.device"


# -- walking and attributes -----------------------------------------------------


def walk(op) -> Iterator[ir.Operation]:
    """Every operation nested in ``op``, in program (pre-)order."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from walk(child)


def top_level_ops(module) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations]


def get_attr(op: ir.Operation, name: str):
    attrs = op.attributes
    return attrs[name] if name in attrs else None


def symbol_name(op: ir.Operation) -> str | None:
    """``op``'s ``sym_name``, None for an op that defines no symbol."""
    attrs = op.attributes
    return attrs["sym_name"].value if "sym_name" in attrs else None


# -- functions ------------------------------------------------------------------


def visibility(function: ir.Operation) -> str:
    """``function``'s symbol visibility: "public" where it states none."""
    attr = get_attr(function, "sym_visibility")
    return "public" if attr is None else ir.StringAttr(attr).value


def is_public(function: ir.Operation) -> bool:
    return visibility(function) == "public"


# -- symbols --------------------------------------------------------------------


class SymbolNames:
    """The top-level symbol names of a module, read once. ``unique(base)``
    gives ``base``, or ``base_1``, ``base_2``, ... where taken, and counts
    the name as taken from then on: names made from one table never clash,
    whether or not their ops are in the module yet. Ops added to the module
    by other means are not seen; ``add`` tells the table of them."""

    def __init__(self, module):
        self._taken = {name for op in top_level_ops(module) if (name := symbol_name(op)) is not None}

    def __contains__(self, name: str) -> bool:
        return name in self._taken

    def add(self, name: str) -> None:
        self._taken.add(name)

    def unique(self, base: str) -> str:
        name, n = base, 0
        while name in self._taken:
            n += 1
            name = f"{base}_{n}"
        self._taken.add(name)
        return name


_BARE_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


def symbol_ref(name: str) -> str:
    """``@name`` as MLIR text: bare where MLIR's syntax allows it (a letter
    or ``_``, then letters, digits, ``_``, ``$``, ``.``), else quoted."""
    if _BARE_SYMBOL.fullmatch(name):
        return f"@{name}"
    return '@"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- affinities -----------------------------------------------------------------

# The module attribute naming the device IREE gives what has no affinity.
DEFAULT_AFFINITY = "stream.affinity.default"
# A symbol as IREE prints it in a device attribute.
SYMBOL = re.compile(r"@([A-Za-z0-9_$.\-]+)")
_DEVICE_REFERENCE = re.compile(r"#hal\.device\.(?:promise|affinity)<@([A-Za-z0-9_$.\-]+)")


@dataclasses.dataclass(frozen=True)
class Affinity:
    """The device symbols an affinity (or any device attribute) names, in
    printed order; empty for an op without one."""

    devices: tuple[str, ...] = ()

    @property
    def single(self) -> str | None:
        """The device, where the affinity names exactly one, else None."""
        return self.devices[0] if len(set(self.devices)) == 1 else None

    @classmethod
    def of_attr(cls, attr) -> Affinity:
        return cls(()) if attr is None else cls(tuple(SYMBOL.findall(str(attr))))


def affinity_of(op: ir.Operation, attr_name: str = "affinity") -> Affinity:
    """The affinity ``op`` states in ``attr_name`` (``affinity``,
    ``source_affinity``, ``target_affinity``, ``stream.affinity.default``)."""
    return Affinity.of_attr(get_attr(op, attr_name))


def affinity_attr(device: str) -> ir.Attribute:
    """``#hal.device.affinity<@device>``."""
    return ir.Attribute.parse(f"#hal.device.affinity<@{device}>")


def device_references(attr) -> list[str]:
    """The devices a ``#hal.device.affinity`` or ``#hal.device.promise``
    anywhere in ``attr`` names, in printed order."""
    return _DEVICE_REFERENCE.findall(str(attr))


# -- device targets (printed) ---------------------------------------------------

_DECLARED_AFFINITY = re.compile(r"iree\.abi\.affinity\s*=\s*#hal\.device\.(?:promise|affinity)<@([A-Za-z0-9_$.\-]+)>")
# A target's driver, and its ordinal where the first {...} after it has one.
_TARGET = re.compile(r'#hal\.device\.target<"([A-Za-z0-9_-]+)"(?:,\s*\{[^}]*?ordinal\s*=\s*(\d+))?')
_TARGET_DRIVER = re.compile(r'#hal\.device\.target<"([A-Za-z0-9_-]+)"')
_ORDINAL = re.compile(r"ordinal\s*=\s*(\d+)")
_ORDINAL_ENTRY = re.compile(r"\{?\s*ordinal\s*=\s*\d+\s*:\s*index\s*\}?,?\s*")
_DEFINED_DEVICE = re.compile(
    r'^#hal\.device\.(?:target|alias)<"([A-Za-z0-9_-]+)"(\[\d+\])?(?:,\s*\{[^}]*?ordinal\s*=\s*(\d+))?')
_EXECUTABLE_TARGET = re.compile(r'#hal\.executable\.target<"[^"]*",\s*"([^"]+)"')
TARGET_PREFIX = "#hal.device.target<"


def target_device(text: str) -> tuple[str, int] | None:
    """(driver, ordinal; 0 if none) of the first ``#hal.device.target`` in
    a device global's printed initial value, None without one."""
    drivers = _TARGET_DRIVER.findall(text)
    if not drivers:
        return None
    ordinal = _ORDINAL.search(text)
    return drivers[0], int(ordinal.group(1)) if ordinal else 0


def targets_named(text: str) -> list[tuple[str, int | None]]:
    """(driver, ordinal or None) of every ``#hal.device.target`` printed
    in ``text`` (an initializer's error message names its target so)."""
    return [(driver, int(ordinal) if ordinal else None) for driver, ordinal in _TARGET.findall(text)]


def defined_device(text: str) -> tuple[str, int | None] | None:
    """(kind, ordinal or None) of a printed initial value that is one
    ``#hal.device.target`` or ``#hal.device.alias`` (``"kind"[N]`` or an
    ``ordinal`` entry), else None."""
    m = _DEFINED_DEVICE.match(text)
    if not m:
        return None
    ordinal = m.group(2)[1:-1] if m.group(2) else m.group(3)
    return m.group(1), None if ordinal is None else int(ordinal)


def without_ordinals(text: str) -> str:
    """A printed device target with its ordinal entries dropped."""
    return _ORDINAL_ENTRY.sub("", text)


def executable_formats(text: str) -> list[str]:
    """The formats of the ``#hal.executable.target``s printed in ``text``."""
    return _EXECUTABLE_TARGET.findall(text)


def declared_affinity_device(text: str) -> str | None:
    """The device one value of a printed ``iree.abi.declaration`` is
    declared on with ``iree.abi.affinity``, or None."""
    m = _DECLARED_AFFINITY.search(text)
    return m.group(1) if m else None


def is_named_parameter(attr) -> bool:
    """A global's initial value read from a parameter archive at run time
    (``#flow.parameter.named<"scope"::"key">``), not a constant in the module."""
    return attr is not None and str(attr).startswith("#flow.parameter.named<")
