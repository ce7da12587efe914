"""Rules at a public function's boundary: its caller gets memory its
declared devices can use, and places its arguments where the module
imports them."""

from __future__ import annotations

import json

from iree.compiler import ir

from mdc.contract.manifest import KEY as MANIFEST_KEY

from ..ir.ir_util import top_level_ops
from ..ir.module_facts import declared_argument_devices, declared_result_devices
from .facts import Allocator, Buffer, of_kind
from .rule import Evidence, Findings, OwnershipRule, Site
from ..ir import ir_adapter as irx


def manifest_default_device(module) -> str | None:
    """The default device the module's mdc manifest gives the caller (its
    "default", else its first device, as the shim reads it), or None
    where no public function carries a manifest."""
    for op in top_level_ops(module):
        if op.name != irx.UTIL_FUNC or "iree.reflection" not in op.attributes:
            continue
        reflection = ir.DictAttr(op.attributes["iree.reflection"])
        if MANIFEST_KEY not in reflection:
            continue
        try:
            data = json.loads(ir.StringAttr(reflection[MANIFEST_KEY]).value)
            return data.get("default") or data["devices"][0]["name"]
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return None
    return None


def _entry_argument(value, fn) -> int | None:
    """The argument number of ``value`` if it is an argument of ``fn``'s entry block."""
    entry = fn.op.regions[0].blocks[0]
    if isinstance(value.owner, ir.Block) and value.owner == entry:
        return ir.BlockArgument(value).arg_number
    return None


class ResultMemory(OwnershipRule):
    """Every result of a public function that declares a device for it
    (``iree.abi.affinity``, read off the ``iree.abi.declaration``) is
    memory that device can use, as queue-buffer says: the caller reads it
    as that device's. An argument returned as it is belongs to the device
    it is declared on."""

    name = "result-memory"
    guards = ("IREE folds an argument imported on one device and exported on another to the "
              "argument itself, so a result declared on a device can be memory it cannot access.")

    def applies(self, site: Site) -> bool:
        op = site.op
        return op.name == irx.UTIL_RETURN and site.function.public \
            and op.parent is not None and op.parent.name == irx.UTIL_FUNC

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        fn = site.function
        results = declared_result_devices(fn.op)
        if not results:
            return
        arguments = declared_argument_devices(fn.op) or []
        for i, value in enumerate(site.op.operands):
            user = results[i] if i < len(results) else None
            if user is None or user not in evidence.access.devices:
                continue
            facts = of_kind(site.facts(value), Buffer)
            argument = _entry_argument(value, fn)
            if not facts and argument is not None and argument < len(arguments) and arguments[argument]:
                # The caller's own buffer, in the memory of the device it is declared on.
                facts = [Buffer.of(arguments[argument], False, None, -1)]
            for buf in facts:
                if not evidence.access.can_use(user, buf.owner, buf.host_visible):
                    self._refuse(site, evidence, findings, i, user, buf, argument)

    def _refuse(self, site, evidence, findings, i, user, buf, argument) -> None:
        access, owner = evidence.access, buf.owner
        notes = [access.pair_note(user, owner)]
        if buf.index < 0 and argument is not None:
            what = f"argument {argument}, declared on {access.describe(owner)}, returned as it is"
            notes.append("nothing moves it: the caller gets its own buffer back as "
                         f"{user}'s result (IREE folds an import exported on another device)")
        else:
            what = f"a buffer allocated by {access.describe(owner)}"
            if evidence.ownership.op_name(buf.index) == irx.HAL_BUFFER_ASSERT:
                notes.append(f"the buffer is an argument imported on {owner}"
                             + (f" at {buf.location}" if buf.location else ""))
            elif buf.location:
                notes.append(f"the buffer is allocated at {buf.location}")
        findings.refuse(
            self, site, (i, user, owner),
            f"result {i} of @{site.function.name}, declared on {access.describe(user)}, is {what}: "
            f"memory {user} cannot access",
            notes,
        )


class DefaultDevice(OwnershipRule):
    """Where the module carries an mdc manifest, an argument of a public
    function declared on no device is imported (``hal.buffer.assert``) on
    a device that can use the memory of the manifest's default device,
    where the caller (mdc-run, load) places it."""

    name = "default-device"
    guards = ("IREE imports an argument declared on no device on its own default device, which "
              "may not reach the memory of mdc's default device, where the caller places it.")

    def applies(self, site: Site) -> bool:
        return site.op.name == irx.HAL_BUFFER_ASSERT and site.function.public

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        default, fn, op = evidence.manifest_default, site.function, site.op
        source = op.operands[0].owner
        if default is None or isinstance(source, ir.Block) or source.name != irx.HAL_BUFFER_VIEW_BUFFER:
            return
        argument = _entry_argument(source.operands[0], fn)
        if argument is None:
            return
        declared = declared_argument_devices(fn.op)
        # No declaration: a buffer-view ABI function, whose manifest entry
        # names each argument's device (stub_signatures), default or not.
        if declared is None or (argument < len(declared) and declared[argument]) \
                or argument in evidence.pinned.get(fn.name, {}):
            return
        access = evidence.access
        for importer in sorted({a.device for a in of_kind(site.facts(op.opview.allocator), Allocator)}):
            if access.can_use(importer, default, False):
                continue
            findings.refuse(
                self, site, (argument, importer),
                f"argument {argument} of @{fn.name} has no device of its own: mdc's default device "
                f"(the manifest's, where the caller places it) is {access.describe(default)}, "
                f"IREE's (where the module imports it) is {access.describe(importer)}",
                [access.pair_note(importer, default)],
            )
