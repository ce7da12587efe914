"""The verifier's rules, in the order they are judged, and how they are run.

The module rules come first, each alone: the first that finds anything is
the answer. Then, where a staged pair exists, the ownership analysis is
computed once and every ownership rule judges every op it applies to; at
one op, violations are reported in the order of OWNERSHIP_RULES.
"""

from __future__ import annotations

from ..analysis.abi import pinned_arguments_of
from .abi_rules import DefaultDevice, ResultMemory, manifest_default_device
from .access import Access
from .fence_rules import CallerFence, ForeignFence
from .memory_rules import CommandBufferBuffer, PooledDealloca, QueueBuffer, SharedAllocation
from .module_rules import ExecutableFormat, ListOrder
from .ownership import analyse
from .rule import Evidence, Findings, Site, Violation

MODULE_RULES = (ExecutableFormat(), ListOrder())
OWNERSHIP_RULES = (
    SharedAllocation(),
    QueueBuffer(),
    PooledDealloca(),
    CommandBufferBuffer(),
    ForeignFence(),
    CallerFence(),
    ResultMemory(),
    DefaultDevice(),
)
RULES = MODULE_RULES + OWNERSHIP_RULES


def check_module_rules(module) -> list[Violation]:
    """The violations of the first module rule that finds any."""
    for rule in MODULE_RULES:
        found = rule.violations(module)
        if found:
            return found
    return []


def check_ownership_rules(module, access: Access) -> list[Violation]:
    """Every violation of an ownership rule, in program order."""
    pinned = pinned_arguments_of(module)
    ownership = analyse(module, access.devices, pinned)
    evidence = Evidence(access, ownership, pinned, manifest_default_device(module))
    findings = Findings(ownership)
    for context, index, op in ownership.sites:
        site = Site(context, index, op)
        for rule in OWNERSHIP_RULES:
            if rule.applies(site):
                rule.check(site, evidence, findings)
    return findings.in_order(OWNERSHIP_RULES)
