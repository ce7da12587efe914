"""What a module says about its devices, read off its IR in one place.

IREE attributes have no Python classes; their printed forms are read by
ir_adapter.py, and every pass and the command lines use these readers
rather than reading the IR themselves:

* symbols and affinities: ``SYMBOL`` (``@device_a``), the devices an
  affinity names (``#hal.device.affinity<@device_a>``), the devices a
  module refers to anywhere (``referenced_devices``), the module's default;
* device globals (``util.global @d : !hal.device``): as IREE target
  devices with kind and ordinal (``declared_devices``; at the HAL phase,
  where an initializer stores the device, ``hal_devices``), as the program
  defines them (``defined_devices``, aliases included), their executable
  formats (``device_formats``) and target text (``device_targets``);
* the devices a public function's arguments and results are declared on:
  from its ``iree.abi.declaration`` (which survives IREE's ABI conversion)
  or from its ``iree.abi.affinity`` argument and result attributes.
"""

from __future__ import annotations

from iree.compiler import ir

from mdc.contract.declaration_text import bracketed_list
from mdc.contract.manifest_record import Device

from . import ir_adapter as irx
from .ir_adapter import SYMBOL, executable_formats, get_attr, top_level_ops, walk  # noqa: F401 (SYMBOL: re-exported)

AFFINITY = "iree.abi.affinity"


# -- symbols and affinities -----------------------------------------------------


def affinity_devices(attr) -> list[str]:
    """Device symbols named by an affinity attribute (empty if none)."""
    return list(irx.Affinity.of_attr(attr).devices)


def single_device(attr) -> str | None:
    """The device of an affinity naming exactly one device, else None."""
    return irx.Affinity.of_attr(attr).single


def module_default_device(module) -> str | None:
    """The device IREE gives values and ops without an affinity
    (``stream.affinity.default``, set from its flow phase on)."""
    return irx.affinity_of(module, irx.DEFAULT_AFFINITY).single


def iree_default_device(names, chosen: str | None = None) -> str | None:
    """The device IREE 3.13 makes the default of a module whose devices are
    ``names`` (before its phases set ``stream.affinity.default``):
    ``chosen`` (``--iree-hal-default-device``), else the name that sorts
    first, not the first given: IREE keeps the named target devices in a
    dictionary attribute, which orders them by name (docs/DESIGN.md
    section 3)."""
    if chosen is not None:
        return chosen
    return min(names, default=None)


def referenced_devices(module) -> dict[str, object]:
    """Every device an affinity or promise anywhere in the module names, with
    the location of its first mention, in program order."""
    found: dict[str, object] = {}
    for op in walk(module):
        attrs = op.attributes
        for i in range(len(attrs)):
            for name in irx.device_references(attrs[i].attr):
                found.setdefault(name, op.location)
    return found


# -- device globals -------------------------------------------------------------


def device_globals(module) -> list[tuple[str, ir.Operation, str | None]]:
    """The module's top-level ``!hal.device`` globals, in order:
    (symbol, op, printed initial value or None)."""
    out = []
    for op in top_level_ops(module):
        if not irx.is_device_global(op):
            continue
        attrs = op.attributes
        out.append((attrs["sym_name"].value, op, str(attrs["initial_value"]) if "initial_value" in attrs else None))
    return out


def declared_devices(module) -> dict[str, Device]:
    """The ``!hal.device`` globals initialised to a ``#hal.device.target``,
    by symbol name, in order."""
    devices: dict[str, Device] = {}
    for name, op, text in device_globals(module):
        if text is None:
            continue
        target = irx.target_device(text)
        if target is not None:
            devices[name] = Device(name, *target, location=op.location)
    return devices


def defined_devices(module) -> dict[str, tuple[str, int | None, object]]:
    """The devices the program defines itself (a top-level ``util.global`` of
    type ``!hal.device`` initialised to one ``#hal.device.target`` or
    ``#hal.device.alias``): {symbol: (kind, ordinal or None, location)}."""
    found = {}
    for name, op, text in device_globals(module):
        defined = irx.defined_device(text) if text is not None else None
        if defined is not None:
            found[name] = (*defined, op.location)
    return found


def device_targets(module) -> dict[str, str]:
    """Each device global's executable targets, as text, with the ordinal
    dropped: two devices with equal text run the same executable variants."""
    return {name: irx.without_ordinals(text) for name, _, text in device_globals(module)
            if text is not None and irx.TARGET_PREFIX in text}


def _device_initializers(module):
    """At the HAL phase a device global is stored by an initializer that
    queries ``hal.device.id`` and names the target in an error message. For
    each top-level initializer: (globals it stores, its status-check
    messages, the device ids it queries)."""
    for op in top_level_ops(module):
        if not irx.is_initializer(op):
            continue
        stored, messages, queried = [], [], []
        for inner in walk(op):
            name = inner.name
            if name == irx.UTIL_GLOBAL_STORE:
                stored.append(ir.FlatSymbolRefAttr(inner.attributes["global"]).value)
            elif name == irx.UTIL_STATUS_CHECK_OK and "message" in inner.attributes:
                messages.append(inner.attributes["message"].value)
            elif name == irx.HAL_DEVICE_QUERY and ir.StringAttr(inner.attributes["category"]).value == "hal.device.id":
                queried.append(inner.attributes["key"].value)
        yield stored, messages, queried


def hal_devices(module) -> dict[str, Device]:
    """The module's devices by global symbol, at any level: a global's
    ``#hal.device.target`` initial value, or, at the HAL phase, the one
    driver its initializer names (in the error message and the device id it
    queries)."""
    devices = declared_devices(module)
    candidates = {name: op for name, op, _ in device_globals(module)}
    found: dict[str, Device] = {}
    for stored, messages, queried in _device_initializers(module):
        drivers, ordinals = [], []
        for message in messages:
            for driver, ordinal in irx.targets_named(message):
                drivers.append(driver)
                if ordinal is not None:
                    ordinals.append(ordinal)
        drivers += [key.rstrip("*") for key in queried]
        drivers = sorted(set(drivers))
        if len(drivers) != 1:
            continue  # no device, or a fallback over several drivers: unknown
        for name in stored:
            if name in candidates and name not in devices:
                found[name] = Device(name, drivers[0], ordinals[0] if ordinals else 0,
                                     location=candidates[name].location)
    # Keep declaration order: the model picks the first local device as host.
    ordered = {}
    for name in candidates:
        if name in devices:
            ordered[name] = devices[name]
        elif name in found:
            ordered[name] = found[name]
    for name, d in devices.items():
        ordered.setdefault(name, d)
    return ordered


def device_formats(module) -> dict[str, set]:
    """The executable formats each device global can run, at any level:
    from its ``#hal.device.target`` initial value, or at the HAL phase from
    the target its initializer names in its error message."""
    formats: dict[str, set] = {}
    for name, _, text in device_globals(module):
        found = executable_formats(text) if text is not None else []
        if found:
            formats[name] = set(found)
    for stored, messages, _ in _device_initializers(module):
        found = set()
        for message in messages:
            if irx.TARGET_PREFIX in message:
                found |= set(executable_formats(message))
        if found:
            for name in stored:
                formats.setdefault(name, found)
    return formats


# -- declared devices of public functions ---------------------------------------


def declared_affinities(function: ir.Operation, attr_name: str) -> list:
    """The ``iree.abi.affinity`` attribute of each argument (``arg_attrs``)
    or result (``res_attrs``) of ``function``, None where it has none."""
    attrs = get_attr(function, attr_name)
    if attrs is None:
        return []
    out = []
    for entry in ir.ArrayAttr(attrs):
        entry = ir.DictAttr(entry)
        out.append(entry[AFFINITY] if AFFINITY in entry else None)
    return out


def declared_device(entries: list[tuple[str, str]]) -> str | None:
    """The device one value's printed attribute entries (``name = value``
    pairs) declare it on with ``iree.abi.affinity``, or None."""
    for name, value in entries:
        if name == AFFINITY:
            return single_device(value)
    return None


def _declaration(function) -> str | None:
    """The ``iree.abi.declaration`` IREE keeps in a public function's
    ``iree.reflection`` (the one place the ABI's affinities survive past
    IREE's input conversion), or None."""
    if "iree.reflection" not in function.attributes:
        return None
    reflection = ir.DictAttr(function.attributes["iree.reflection"])
    if "iree.abi.declaration" not in reflection:
        return None
    return ir.StringAttr(reflection["iree.abi.declaration"]).value


def _devices_of(items: list[str]) -> list[str | None]:
    return [irx.declared_affinity_device(item) for item in items]


def declared_argument_devices(function) -> list[str | None] | None:
    """The device each argument of public ``function`` is declared on
    (``iree.abi.affinity``), None for an argument declared without one, in
    the order of the source function's arguments; read off its
    ``iree.abi.declaration``. None when the function has no declaration."""
    text = _declaration(function)
    start = text.find("(") if text is not None else -1
    if start < 0:
        return None
    return _devices_of(bracketed_list(text, start)[0])


def declared_result_devices(function) -> list[str | None] | None:
    """Like declared_argument_devices, for the function's results (the
    list after ``->``; a single result may stand without parentheses)."""
    text = _declaration(function)
    start = text.find("(") if text is not None else -1
    if start < 0:
        return None
    _, end = bracketed_list(text, start)
    rest = text[end:].lstrip()
    if not rest.startswith("->"):
        return []
    rest = rest[2:].lstrip()
    if rest.startswith("("):
        return _devices_of(bracketed_list(rest, 0)[0])
    return _devices_of([rest]) if rest else []


def mutable_globals(module) -> list[str]:
    """The program's own state: the name of every top-level mutable global
    (``util.global mutable``, as IREE's input conversion leaves
    ``ml_program.global`` too) that holds no device, in program order. Read
    before mdc's passes, which add mutable globals of their own."""
    names = []
    for op in top_level_ops(module):
        if op.name not in irx.GLOBALS or "sym_name" not in op.attributes:
            continue
        if "is_mutable" not in op.attributes:
            continue
        if "type" in op.attributes and irx.is_type(ir.TypeAttr(op.attributes["type"]).value, irx.DEVICE):
            continue
        names.append(op.attributes["sym_name"].value)
    return names


def state_by_function(module) -> dict[str, list[str]]:
    """For each public function of the program, the program's own mutable
    globals (``mutable_globals``) it refers to, itself or through the
    functions it calls, in program order; {} for a program without any.
    Any reference counts (a load as much as a store): a function that only
    reads state another function writes still depends on it."""
    state = mutable_globals(module)
    if not state:
        return {}
    functions = {op.attributes["sym_name"].value: op for op in top_level_ops(module)
                 if irx.is_function(op) and "sym_name" in op.attributes}
    refers = {name: _symbols_referred_to(op) for name, op in functions.items()}
    result = {}
    for name, op in functions.items():
        if not irx.is_public(op):
            continue
        seen, todo = {name}, [name]
        while todo:
            for callee in refers.get(todo.pop(), ()):
                if callee in functions and callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        touched = set().union(*(refers[f] for f in seen))
        result[name] = [g for g in state if g in touched]
    return result


def _symbols_referred_to(op) -> set[str]:
    """The root name of every symbol reference in ``op``'s body's
    attributes (globals loaded or stored, functions called)."""
    names: set[str] = set()

    def add(attr) -> None:
        attr = attr.maybe_downcast() if hasattr(attr, "maybe_downcast") else attr
        if isinstance(attr, ir.FlatSymbolRefAttr):
            names.add(attr.value)
        elif isinstance(attr, ir.SymbolRefAttr):
            names.add(attr.value[0])
        elif isinstance(attr, ir.ArrayAttr):
            for item in attr:
                add(item)

    for nested in walk(op):
        attributes = nested.attributes
        for i in range(len(attributes)):
            add(attributes[i].attr)
    return names

