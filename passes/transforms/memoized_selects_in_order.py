"""memoized-selects-in-order: names and places the globals of IREE's
memoized device selections in program order, so that a compile gives the
same vmfb every time.

IREE's HAL pipeline (``iree-hal-memoize-device-selection``) hoists each
distinct ``hal.allocator.select`` into an initializer that stores the
device (and queue affinity) it selects in new globals,
``__allocator_select_device``, ``__allocator_select_device_0``, ... It
visits the distinct selects in the order of a hash map keyed by attribute
pointers, which differs from one process (or one MLIR context) to the next:
with two or more distinct selects, which of them gets which name, and whose
initializer comes first, changes between runs of the same compile, and with
it the vmfb (docs/DESIGN.md section 8).

This pass makes the choice IREE makes when it visits the selects in program
order: the group (an initializer and the globals it stores) first loaded
earliest in the module takes the first name of each kind and the first
place among the groups' ops; the names and places are the ones IREE gave,
permuted. A module with fewer than two groups, or whose groups are not in
the shape IREE makes, is left as it is.
"""

from __future__ import annotations

import dataclasses
import re

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..infra.pass_base import ModulePass, NoOptions

# IREE's names: the kind, then "_N" for every name after the first (its
# symbol table appends a counter shared by both kinds).
MEMOIZED_GLOBAL = re.compile(r"__allocator_select_(device|affinity)(?:_(\d+))?")


@dataclasses.dataclass
class SelectGroup:
    """One memoized select: its initializer and the globals it stores, by kind."""

    initializer: ir.Operation
    globals: dict[str, ir.Operation]  # kind ("device", "affinity") -> util.global

    @property
    def names(self) -> set[str]:
        return {irx.symbol_name(g) for g in self.globals.values()}

    def text_key(self) -> str:
        """The initializer's text with its globals' names left out: equal
        for two groups only where they select alike."""
        text = str(self.initializer)
        for name in self.names:
            text = text.replace(irx.symbol_ref(name), "@_")
        return text


def _name_order(name: str) -> int:
    """Where IREE's counter put ``name``: the bare name first, then by N."""
    suffix = MEMOIZED_GLOBAL.fullmatch(name).group(2)
    return -1 if suffix is None else int(suffix)


def _stored_global(op: ir.Operation) -> str | None:
    if op.name != irx.UTIL_GLOBAL_STORE:
        return None
    return ir.FlatSymbolRefAttr(op.attributes["global"]).value


def select_groups(module) -> list[SelectGroup] | None:
    """The memoized selects of ``module`` in module order (of their
    initializers); None where the memoized globals are not each stored by
    one initializer that holds one select and stores one global of each kind."""
    top = irx.top_level_ops(module)
    memoized = {name: op for op in top if op.name == irx.UTIL_GLOBAL
                and (name := irx.symbol_name(op)) is not None and MEMOIZED_GLOBAL.fullmatch(name)}
    groups: list[SelectGroup] = []
    claimed: set[str] = set()
    for op in top:
        if not irx.is_initializer(op):
            continue
        ops = list(irx.walk(op))
        stored = [name for o in ops if (name := _stored_global(o)) in memoized]
        if not stored:
            continue
        kinds = {MEMOIZED_GLOBAL.fullmatch(name).group(1): memoized[name] for name in stored}
        selects = sum(o.name == irx.HAL_ALLOCATOR_SELECT for o in ops)
        if selects != 1 or len(kinds) != len(stored) or claimed & set(stored):
            return None
        claimed |= set(stored)
        groups.append(SelectGroup(op, kinds))
    return groups if claimed == set(memoized) else None


def first_loads(module, groups: list[SelectGroup]) -> list[float]:
    """For each group, where (in a walk of the module in program order) an
    op outside the groups' initializers and the executables (kernels, which
    name no program global) first names one of its globals."""
    owner = {name: i for i, g in enumerate(groups) for name in g.names}
    initializers = [g.initializer for g in groups]
    first = [float("inf")] * len(groups)
    position = 0
    for top in irx.top_level_ops(module):
        if top in initializers or irx.is_executable(top):
            continue
        for op in irx.walk(top):
            position += 1
            attr = irx.get_attr(op, "global")
            if attr is None or not isinstance(attr, ir.FlatSymbolRefAttr):
                continue
            i = owner.get(attr.value)
            if i is not None and position < first[i]:
                first[i] = position
    return first


def _rename(module, renames: dict[str, str]) -> None:
    """Renames globals (``renames``: old -> new, a permutation of names)
    and every reference to them, through temporary names."""
    table = {irx.symbol_name(op): op for op in irx.top_level_ops(module) if irx.symbol_name(op) in renames}
    temporary = {old: f"{old}.mdc_renaming" for old in renames}
    for steps in (temporary, {temporary[old]: new for old, new in renames.items()}):
        for old, new in steps.items():
            ir.SymbolTable.replace_all_symbol_uses(old, new, module)
        for old, new in steps.items():
            op = table.pop(old)
            ir.SymbolTable.set_symbol_name(op, new)
            table[new] = op


def _place(module, groups_in_order: list[SelectGroup]) -> bool:
    """Puts the groups' top-level ops, in ``groups_in_order``'s order (each
    group's ops in their module order), into the places the groups' ops
    take now, leaving every other op where it is; returns whether any moved."""
    top = irx.top_level_ops(module)
    rank = {}
    for g, group in enumerate(groups_in_order):
        for op in (*group.globals.values(), group.initializer):
            rank[top.index(op)] = (g, top.index(op))
    wanted = iter(sorted(rank, key=rank.get))
    desired = [top[next(wanted)] if i in rank else op for i, op in enumerate(top)]
    if desired == top:
        return False
    block = module.regions[0].blocks[0]
    for i, op in enumerate(desired):
        if i not in rank:
            continue
        anchor = next((o for o in desired[i + 1:] if top.index(o) not in rank), None)
        if anchor is not None:
            op.move_before(anchor)
        else:
            last = list(block.operations)[-1].operation
            if last != op:
                op.move_after(last)
    return True


def order_memoized_selects(module) -> bool:
    """Names and places ``module``'s memoized selects in program order
    (this module's docstring); returns whether anything changed."""
    groups = select_groups(module)
    if groups is None or len(groups) < 2:
        return False
    first = first_loads(module, groups)
    keys = [g.text_key() for g in groups]
    ordered = [groups[i] for i in sorted(range(len(groups)), key=lambda i: (first[i], keys[i]))]
    renames: dict[str, str] = {}
    for kind in ("device", "affinity"):
        having = [g for g in ordered if kind in g.globals]
        names = sorted((irx.symbol_name(g.globals[kind]) for g in having), key=_name_order)
        renames.update({irx.symbol_name(g.globals[kind]): new for g, new in zip(having, names)})
    changed = {old: new for old, new in renames.items() if old != new}
    if changed:
        _rename(module, changed)
    return _place(module, ordered) or bool(changed)


class MemoizedSelectsInOrder(ModulePass):
    name = "memoized-selects-in-order"
    level = "hal"
    summary = "name and place IREE's memoized allocator selections in program order (a deterministic vmfb)"

    Options = NoOptions

    def apply(self, module, options: NoOptions) -> None:
        order_memoized_selects(module)
