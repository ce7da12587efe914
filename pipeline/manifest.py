"""The device manifest mdc-compile writes into a vmfb.

It is a JSON string under the key ``mdc.manifest`` in each public
function's ``iree.reflection`` dictionary, which survives IREE's ABI
wrapping and is readable with the runtime alone
(``VmModule.lookup_function(name).reflection``). runtime_shim reads it.

    {"format": "mdc.manifest/1",
     "devices": [{"name": "device_a", "spec": "local[0]", "kind": "local", "ordinal": 0}, ...],
     "default": "device_a",
     "staging": [{"from": "device_a", "to": "device_b", "owner": "device_b"}, ...]}

``default`` is the device IREE gives values without an affinity (the
module's ``stream.affinity.default``: ``--iree-hal-default-device``, else
the device whose name sorts first): the caller places an argument declared
without a device there and reads such a result from there.

``staging`` lists every ordered pair the memory model stages, with the
device whose allocator provides the pinned staging memory (for a pair staged
through a local device, ``via`` names it and ``owner`` is null).

With ``--pinned-arguments``, ``"pinned_arguments": {"f": {"0": "device_b"}}``
says that argument 0 of ``@f`` must be given in device_b's pinned memory
(HostLocal|DeviceVisible, from its allocator); runtime_shim places it there.

``"host_entry_points": {"f": "f$host"}`` names, for each public function
that has one, its host twin (passes/host_entry_points.py): the same
function with every tensor taken and returned on the local device
``"host"``. A coarse-fences function that a sync wrapper calls may share
the wrapper's twin.

``"no_host_entry_points": true`` says mdc-compile was given
``--no-host-entry-points``.

``"result_storage": {"f": {"function": "f$into", "results": [0]}}`` names
each result-storage twin (passes/result_storage_twins.py) and the results
it writes into the caller's storage (contract/manifest.py gives the
format).

``"result_devices": {"f": {"0": "device_b"}}`` says where each tensor
result of a declared function lives when its declaration names no device
(contract/manifest.py gives the format): read off the stream IR
(stub_signatures.undeclared_result_devices), so the shim fetches it from
that device.

``"mutable_globals": ["counter"]`` lists the program's own mutable
globals (module_facts.mutable_globals), ``[]`` when it has none: state a
call leaves for the next, which the shim's pipelined ``map`` must not
split between VM contexts. With any, ``"state_by_function": {"f": ["counter"],
"g": []}`` says which of them each public function refers to
(module_facts.state_by_function): ``map`` pipelines ``g``.

``"tied_dims": {"f": [[[0, 0], [1, 0]]]}`` lists, for each public
function with any, the groups of (argument, dimension) the program requires
equal (passes/tied_dims.py; contract/manifest.py gives the format).

``"functions"`` (contract/manifest.py gives the format) describes each
public function that has no ``iree.abi.declaration``: a program already in
the buffer-view ABI, such as IREE's torch input conversion of an
iree-turbine export, gets none from IREE. The types and devices are read
off the stream IR (passes/stub_signatures.py); such a function gets an
``iree.reflection`` holding only the manifest.
"""

from __future__ import annotations

import json

from iree.compiler import ir

from mdc.contract.manifest import (FORMAT, FUNCTIONS, KEY, MUTABLE_GLOBALS, NO_HOST_ENTRY_POINTS, RESULT_DEVICES,
                                   RESULT_STORAGE, SEAL_LENGTH, SEAL_PREFIX, STATE_BY_FUNCTION, TIED_DIMS)
from mdc.passes.ir_util import top_level_ops
from mdc.passes.memory_model import MemoryModel


def manifest_json(devices, model: MemoryModel, pinned_arguments: dict | None = None,
                  host_entry_points: dict | None = None, host: str | None = None,
                  functions: dict | None = None, storage_twins=(), mutable_globals=(),
                  state_by_function: dict | None = None, tied_dims: dict | None = None,
                  default: str | None = None, no_host_entry_points: bool = False,
                  result_devices: dict | None = None) -> str:
    """``pinned_arguments``: {function: {argument index: device}}, as
    abi.pinned_arguments_of reads it off the module (JSON
    writes the indices as strings). ``host_entry_points``: {function: twin},
    each twin's values on device ``host``. ``functions``: {name:
    stub_signatures.StubSignature} of the functions without a declaration.
    ``storage_twins``: (function, twin, stored result indices) per
    result-storage twin. ``mutable_globals``: the program's own mutable
    globals (module_facts.mutable_globals); ``state_by_function``: which of
    them each public function refers to (module_facts.state_by_function),
    written only where there are any. ``tied_dims``: {function: groups of
    (argument, dimension)} (tied_dims.tied_dims), written where there are any.
    ``default``: the module's default device (module_facts.module_default_device).
    ``no_host_entry_points``: mdc-compile was given --no-host-entry-points.
    ``result_devices``: {function: {result index: device}} of results their
    declaration places nowhere (stub_signatures.undeclared_result_devices)."""
    staging = []
    for src, dst, policy in model.staged_pairs():
        entry = {"from": src, "to": dst, "owner": policy.owner}
        if policy.via:
            entry["via"] = policy.via
        staging.append(entry)
    return json.dumps(
        {
            "format": FORMAT,
            "devices": [
                {"name": d.name, "spec": d.spec, "kind": d.kind, "ordinal": d.ordinal}
                for d in devices
            ],
            **({"default": default} if default is not None else {}),
            "staging": staging,
            **({"pinned_arguments": pinned_arguments} if pinned_arguments else {}),
            **({"host": host, "host_entry_points": host_entry_points} if host_entry_points else {}),
            **({NO_HOST_ENTRY_POINTS: True} if no_host_entry_points else {}),
            **({RESULT_STORAGE: {f: {"function": twin, "results": list(results)}
                                 for f, twin, results in storage_twins}} if storage_twins else {}),
            **({FUNCTIONS: {name: _function_entry(sig) for name, sig in functions.items()}}
               if functions else {}),
            **({TIED_DIMS: {f: [[list(member) for member in group] for group in groups]
                            for f, groups in tied_dims.items()}} if tied_dims else {}),
            **({RESULT_DEVICES: {f: {str(i): d for i, d in found.items()} for f, found in result_devices.items()}}
               if result_devices else {}),
            MUTABLE_GLOBALS: list(mutable_globals),
            **({STATE_BY_FUNCTION: {f: list(g) for f, g in state_by_function.items()}}
               if mutable_globals and state_by_function else {}),
        },
        separators=(",", ":"),
        sort_keys=False,
    )


def _function_entry(sig) -> dict:
    def values(vs):
        return [{"type": v.type, "device": v.device} for v in vs]

    entry = {"model": sig.model, "arguments": values(sig.arguments), "results": values(sig.results)}
    if sig.calls is not None:
        entry["calls"] = sig.calls
    return entry


def attach(module, text: str, undeclared=()) -> None:
    """Adds the manifest to every public function's reflection dictionary,
    and gives the public functions named in ``undeclared`` (which IREE gave
    none) one holding only the manifest."""
    for op in top_level_ops(module):
        if op.name != "util.func":
            continue
        name = op.attributes["sym_name"].value if "sym_name" in op.attributes else None
        if "iree.reflection" not in op.attributes and name not in undeclared:
            continue
        visibility = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
        if visibility is not None and str(visibility) != '"public"':
            continue
        old = op.attributes["iree.reflection"] if "iree.reflection" in op.attributes else ir.DictAttr.get({})
        entries = {old[i].name: old[i].attr for i in range(len(old))}
        entries[KEY] = ir.StringAttr.get(text)
        op.attributes["iree.reflection"] = ir.DictAttr.get(entries)


# -- the integrity seal ---------------------------------------------------------
#
# A vmfb is a ZIP archive. mdc-compile stores a SHA-256 of the whole file in
# the archive comment (the last bytes of the file; a valid ZIP, loaded by
# IREE as before), and mdc-run checks it before IREE sees the module: IREE's
# bytecode verifier lets some corrupted modules through, and the VM then
# crashes or loops forever on them (stock iree-run-module too). The digest
# covers every byte before it, the comment length field included
# (contract/manifest.py holds the prefix and length mdc-run checks).
_EOCD = b"PK\x05\x06"  # ZIP end of central directory record, 22 bytes with no comment


def seal(vmfb: bytes) -> bytes:
    """The vmfb with its digest in the ZIP comment; unchanged if it is not
    a ZIP without a comment (nothing to seal safely)."""
    import hashlib

    if len(vmfb) < 22 or vmfb[-22:-18] != _EOCD or vmfb[-2:] != b"\0\0":
        return vmfb
    body = vmfb[:-2] + SEAL_LENGTH.to_bytes(2, "little")
    return body + SEAL_PREFIX + hashlib.sha256(body).hexdigest().encode()
