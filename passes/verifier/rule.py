"""What a verifier rule is, what it judges by, and what it reports.

A rule has a ``name``, one sentence (``guards``) saying which IREE behaviour
it guards against, and a check. A ModuleRule judges the whole module on its
own; an OwnershipRule judges one op at a time (a Site) by the ownership
analysis (Evidence) and reports to Findings.
"""

from __future__ import annotations

import dataclasses

from .access import Access
from .facts import EMPTY
from .ownership import Context, Ownership


@dataclasses.dataclass
class Violation:
    index: int  # program order of the offending op
    rule: str
    location: str | None
    message: str
    notes: list

    @property
    def short(self) -> str:
        return f"{self.location or '<unknown location>'}: {self.message}"


@dataclasses.dataclass(frozen=True)
class Site:
    """One op of one analysed context."""

    context: Context
    index: int
    op: object

    @property
    def function(self):
        return self.context.function

    def facts(self, value) -> frozenset:
        return self.context.state.get(value, EMPTY)


@dataclasses.dataclass
class Evidence:
    """What the ownership rules judge by: the memory model, the ownership
    of every value, and what the module's mdc records say."""

    access: Access
    ownership: Ownership
    pinned: dict  # {function: {argument: device}}: arguments given in pinned memory
    manifest_default: str | None  # where the caller places an argument of no device


class Findings:
    """The violations reported, each (op, rule, key) once: the first report wins."""

    def __init__(self, ownership: Ownership):
        self._ownership = ownership
        self._found: dict = {}

    def refuse(self, rule: "OwnershipRule", site: Site, key: tuple, message: str, notes: list) -> None:
        full = (site.index, rule.name) + key
        if full not in self._found:
            location = self._ownership.location(site.index, site.op)
            self._found[full] = Violation(site.index, rule.name, location, message, notes)

    def in_order(self, rules) -> list[Violation]:
        """In program order; at one op, in the order of ``rules``."""
        rank = {rule.name: i for i, rule in enumerate(rules)}
        return sorted(self._found.values(), key=lambda v: (v.index, rank[v.rule]))


class ModuleRule:
    """A rule judged on the module as a whole."""

    name: str
    guards: str

    def violations(self, module) -> list[Violation]:
        raise NotImplementedError


class OwnershipRule:
    """A rule judged op by op on the ownership analysis."""

    name: str
    guards: str

    def applies(self, site: Site) -> bool:
        """Whether the rule judges this op (cheap: its name, its function)."""
        raise NotImplementedError

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        raise NotImplementedError
