"""The device manifest mdc-compile writes into a vmfb, and its seal.

contract/manifest.py describes the manifest's format; ``manifest_json``
builds the contract's record (mdc.contract.manifest_record.Manifest) from
what the passes found and returns its JSON, which ``attach`` puts under the
key ``mdc.manifest`` in each public function's ``iree.reflection``
dictionary (runtime_shim reads it with the runtime alone). ``seal`` stores
the vmfb's digest in its ZIP comment.
"""

from __future__ import annotations

from iree.compiler import ir

from mdc.contract.manifest import KEY, SEAL_LENGTH, SEAL_PREFIX
from mdc.contract.manifest_record import FunctionEntry, Manifest, Staging, ValueEntry
from mdc.passes.ir.ir_util import top_level_ops
from mdc.passes.analysis.memory_model import MemoryModel


def manifest_json(devices, model: MemoryModel, pinned_arguments: dict | None = None,
                  host_entry_points: dict | None = None, host: str | None = None,
                  functions: dict | None = None, storage_twins=(), mutable_globals=(),
                  state_by_function: dict | None = None, tied_dims: dict | None = None,
                  default: str | None = None, no_host_entry_points: bool = False,
                  result_devices: dict | None = None, argument_bounds: dict | None = None) -> str:
    """``devices``: the --device options (contract Devices, specs as given), in order.
    ``pinned_arguments``: {function: {argument index: device}}, as
    abi.pinned_arguments_of reads it off the module. ``host_entry_points``:
    {function: twin}, each twin's values on device ``host``. ``functions``:
    {name: stub_signatures.StubSignature} of the functions without a
    declaration. ``storage_twins``: (function, twin, stored result indices)
    per result-storage twin. ``mutable_globals``: the program's own mutable
    globals (module_facts.mutable_globals); ``state_by_function``: which of
    them each public function refers to (module_facts.state_by_function),
    written only where there are any. ``tied_dims``: {function: groups of
    (argument, dimension)} (tied_dims.tied_dims), written where there are any.
    ``default``: the module's default device (module_facts.module_default_device).
    ``no_host_entry_points``: mdc-compile was given --no-host-entry-points.
    ``result_devices``: {function: {result index: device}} of results their
    declaration places nowhere (stub_signatures.undeclared_result_devices).
    ``argument_bounds``: {function: [(argument, dimension, bound)]} that
    --max-dim gave the placed functions (dim_names.argument_bounds); a sync
    function of ``functions`` that calls one of them gets its bounds too."""
    return Manifest(
        devices=tuple(devices),
        staging=tuple(Staging(src, dst, policy.owner, policy.via) for src, dst, policy in model.staged_pairs()),
        default=default,
        pinned_arguments=_flat(pinned_arguments),
        host=host if host_entry_points else None,
        host_entry_points=tuple((host_entry_points or {}).items()),
        no_host_entry_points=no_host_entry_points,
        functions=tuple(_function_entry(name, sig) for name, sig in (functions or {}).items()),
        storage_twins=tuple((f, twin, tuple(results)) for f, twin, results in storage_twins),
        mutable_globals=tuple(mutable_globals),
        state_by_function=(tuple((f, tuple(g)) for f, g in state_by_function.items())
                           if mutable_globals and state_by_function else None),
        tied_dims=tuple((f, tuple(tuple(tuple(member) for member in group) for group in groups))
                        for f, groups in (tied_dims or {}).items()),
        argument_bounds=_bounds(argument_bounds or {}, functions or {}),
        result_devices=_flat(result_devices),
    ).to_json()


def _bounds(by_function: dict, functions: dict) -> tuple:
    """(function, bounds) of the placed functions, and of each function
    that only calls one of them with its own arguments (a sync wrapper:
    StubSignature.calls), in the order given."""
    found = dict(by_function)
    for name, sig in functions.items():
        if sig.calls in by_function and name not in found:
            found[name] = by_function[sig.calls]
    return tuple((f, tuple(tuple(b) for b in bounds)) for f, bounds in found.items() if bounds)


def _flat(by_function: dict | None) -> tuple:
    """(function, index, device) of {function: {index: device}}."""
    return tuple((f, i, d) for f, found in (by_function or {}).items() for i, d in found.items())


def _function_entry(name: str, sig) -> FunctionEntry:
    def values(vs):
        return tuple(ValueEntry(v.type, v.device) for v in vs)

    return FunctionEntry(name, sig.model, values(sig.arguments), values(sig.results), sig.calls)


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
