"""A typed layer over IREE's Python IR (``iree.compiler.ir``): the one place
mdc's passes learn what an op is, what an attribute says, and how a new
symbol is named.

* op names: one constant per op mdc reads (``UTIL_CALL``) and the families
  it treats alike (``FUNCTIONS``, ``CALLS``, ``RETURNS``, ``BRANCHES``),
  kept in op_names.py and re-exported here, and predicates over them
  (``is_function``, ``is_transfer``, ...);
* types: the fixed types mdc builds and compares (``fence_type()``,
  ``resource_type("external")``, ...), parsed once per context, and
  predicates over types (``is_resource``, ``is_tensor_type``,
  ``is_builtin_type``, ...);
* enums: ``iterator_types(op)`` (a linalg.generic's loop kinds, compared
  as attributes) and ``enum_names_any`` (an IREE enum that is not an
  integer, printed);
* functions: ``visibility``/``is_public`` (a function without
  ``sym_visibility`` is public);
* affinities: ``affinity_of(op)`` reads an op's affinity as an ``Affinity``
  (the device symbols it names), ``affinity_attr(device)`` builds one;
* printed attributes: IREE exposes no Python classes for its dialects'
  attributes (``#hal.device.target``, ``#hal.device.affinity``,
  ``#hal.executable.target``, the HAL's enums where not integers), so
  their printed forms are read here, once, behind typed functions, and
  nowhere else; an enum with a fixed spelling
  (``#linalg.iterator_type<reduction>``) is compared as an attribute;
* symbols: ``SymbolNames`` reads a module's top-level symbol names once and
  makes unique ones from them.
"""

from __future__ import annotations

import dataclasses
import re

from typing import Iterator

from iree.compiler import ir

# The op names, re-exported from op_names.py: irx.UTIL_CALL, irx.CALLS, ...
from .op_names import *  # noqa: F401,F403
from .op_names import (BRANCHES, CALLS, EXECUTABLES, FUNCTIONS, LOOPS, RETURNS, STREAM_ASYNC_TRANSFER, UTIL_GLOBAL,
                       UTIL_INITIALIZER)

# -- op predicates --------------------------------------------------------------


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
    return op.name == UTIL_GLOBAL and is_type(ir.TypeAttr(op.attributes["type"]).value, DEVICE)


# -- walking and attributes -----------------------------------------------------


def walk(op) -> Iterator[ir.Operation]:
    """Every operation nested in ``op``, in program (pre-)order."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from walk(child)


def reads_from_outside(op) -> list:
    """The values ``op`` and the ops nested in it read from outside ``op``, in order."""
    nested = [op, *walk(op)]
    inner = {r for o in nested[1:] for r in o.results}
    inner |= {a for o in nested for region in o.regions for block in region.blocks for a in block.arguments}
    return list(dict.fromkeys(v for o in nested for v in o.operands if v not in inner))


def top_level_ops(module) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations]


def get_attr(op: ir.Operation, name: str):
    attrs = op.attributes
    return attrs[name] if name in attrs else None


def symbol_name(op: ir.Operation) -> str | None:
    """``op``'s ``sym_name``, None for an op that defines no symbol."""
    attrs = op.attributes
    return attrs["sym_name"].value if "sym_name" in attrs else None


# -- types ----------------------------------------------------------------------

# The fixed types mdc builds and compares, as MLIR prints them. IREE exposes
# no Python classes for its dialects' types, so they are parsed from text,
# once per context (``fixed_type``), and compared as types (``is_type``),
# never as text. Builders run where a context is current (under an op's
# location); a comparison takes its context from the type it compares.
BUFFER = "!hal.buffer"
BUFFER_VIEW = "!hal.buffer_view"
COMMAND_BUFFER = "!hal.command_buffer"
BYTES_TENSOR = "tensor<?xi8>"
DEVICE = "!hal.device"
FENCE = "!hal.fence"
TIMEPOINT = "!stream.timepoint"
UNUSED = "!util.unused"
LIST = "!util.list<?>"

_parsed: dict[tuple[type, str], object] = {}
_parsed_context = None


def _fixed(kind, text: str, context):
    """``text`` parsed as a ``kind`` (ir.Type, ir.Attribute) in ``context``
    (the current one by default), once: the cache holds the parses of one
    context, the last one asked for (a new context starts it anew)."""
    global _parsed_context
    context = context or ir.Context.current
    if context is not _parsed_context:
        _parsed.clear()
        _parsed_context = context
    found = _parsed.get((kind, text))
    if found is None:
        found = _parsed[(kind, text)] = kind.parse(text, context)
    return found


def fixed_type(text: str, context=None) -> ir.Type:
    """``text`` as a type, parsed once per context."""
    return _fixed(ir.Type, text, context)


def fixed_attr(text: str, context=None) -> ir.Attribute:
    """``text`` as an attribute, parsed once per context (an IREE or linalg
    enum value to compare with, where no Python class reads one)."""
    return _fixed(ir.Attribute, text, context)


def is_type(type_: ir.Type, text: str) -> bool:
    """``type_`` is the fixed type ``text`` (``irx.FENCE``, ...)."""
    return type_ == fixed_type(text, type_.context)


def resource_type(lifetime: str = "*", context=None) -> ir.Type:
    """``!stream.resource<lifetime>`` (``*``, ``external``, ``staging``, ...)."""
    return fixed_type(f"!stream.resource<{lifetime}>", context)


def buffer_view_type() -> ir.Type:
    return fixed_type(BUFFER_VIEW)


def fence_type() -> ir.Type:
    return fixed_type(FENCE)


def timepoint_type() -> ir.Type:
    return fixed_type(TIMEPOINT)


def device_type() -> ir.Type:
    return fixed_type(DEVICE)


def bytes_tensor_type() -> ir.Type:
    """``tensor<?xi8>``: a crossing's bytes, as the staging lowerings see them."""
    return fixed_type(BYTES_TENSOR)


def is_resource_type(type_: ir.Type) -> bool:
    """A ``!stream.resource<...>`` of any lifetime."""
    return type_.typeid == resource_type(context=type_.context).typeid


def is_resource(value: ir.Value) -> bool:
    return is_resource_type(value.type)


def is_data_tiled_type(type_: ir.Type) -> bool:
    """A ranked tensor type with an encoding (data tiling's
    ``#iree_encoding``, which each device's target resolves to a layout)."""
    return isinstance(type_, ir.RankedTensorType) and ir.RankedTensorType(type_).encoding is not None


def is_list_type(type_: ir.Type) -> bool:
    """A ``!util.list<...>`` of any element type."""
    return type_.typeid == fixed_type(LIST, type_.context).typeid


def is_tensor_type(type_: ir.Type) -> bool:
    """A builtin ``tensor<...>``, ranked or not."""
    return isinstance(type_, (ir.RankedTensorType, ir.UnrankedTensorType))


def is_index_type(type_: ir.Type) -> bool:
    return isinstance(type_, ir.IndexType)


# The builtin types' classes (tensors, memrefs and vectors are ShapedTypes);
# a type of any other dialect (``!hal.fence``) has none of them.
_BUILTIN_TYPES = (ir.IntegerType, ir.IndexType, ir.FloatType, ir.ComplexType, ir.ShapedType, ir.TupleType,
                  ir.FunctionType, ir.NoneType)


def is_builtin_type(type_: ir.Type) -> bool:
    """A type of MLIR's builtin dialect (``i32``, ``tensor<4xf32>``, ...),
    not one printed ``!dialect.name``."""
    return isinstance(type_, _BUILTIN_TYPES)


def index_constant(attr) -> int | None:
    """The value of an ``N : index`` attribute, else None."""
    if isinstance(attr, ir.IntegerAttr) and is_index_type(attr.type):
        return attr.value
    return None


# -- enums ----------------------------------------------------------------------

_ITERATOR_TYPES = ("parallel", "reduction")


def iterator_types(op: ir.Operation) -> list[str | None]:
    """The loop kinds of a ``linalg.generic``'s ``iterator_types``
    (``parallel``, ``reduction``; None for another), in order, compared as
    attributes with ``#linalg.iterator_type<...>`` (no Python class reads
    one); [] without the attribute."""
    attrs = get_attr(op, "iterator_types")
    if attrs is None:
        return []
    return [next((k for k in _ITERATOR_TYPES if a == fixed_attr(f"#linalg.iterator_type<{k}>", a.context)), None)
            for a in ir.ArrayAttr(attrs)]


def enum_names_any(attr, *words: str) -> bool:
    """Whether an IREE enum or bit-flags attribute that is not an integer
    names one of ``words`` where printed (``"HostVisible|DeviceLocal"``):
    the bindings expose no class for IREE's enums. IREE 3.13 keeps a
    memory type and a dealloca's flags as integers, which hal_bits reads
    first; this reads any other form."""
    text = str(attr)
    return any(w in text for w in words)


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


def executable_target_format(attr) -> str | None:
    """The format of a ``#hal.executable.target`` attribute (a
    ``hal.executable.variant``'s ``target``), None where it names none."""
    found = executable_formats(str(attr))
    return found[0] if found else None


def declared_affinity_device(text: str) -> str | None:
    """The device one value of a printed ``iree.abi.declaration`` is
    declared on with ``iree.abi.affinity``, or None."""
    m = _DECLARED_AFFINITY.search(text)
    return m.group(1) if m else None


def is_named_parameter(attr) -> bool:
    """A global's initial value read from a parameter archive at run time
    (``#flow.parameter.named<"scope"::"key">``), not a constant in the module."""
    return attr is not None and str(attr).startswith("#flow.parameter.named<")
