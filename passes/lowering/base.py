"""The one interface every lowering of a crossing has.

A lowering says whether it ``applies`` to a crossing site and ``lower``s
it at the current insertion point, returning the value that stands for the
crossing on the destination. One that can also write a value coming back
straight into an output argument's storage says so with
``applies_into_output`` and ``lower_into_output``. ``caller_buffer`` is
what the report says about the caller's buffer the lowering copies from or
into (None: none of the caller's).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from iree.compiler import ir

from ..analysis.memory_model import LinkPolicy


@dataclasses.dataclass
class Site:
    """A crossing to lower: ``value`` (``size`` bytes, living on ``src``)
    wanted on ``dst`` as ``result_type``, under ``policy``. ``carried``: it
    enters a loop's or branch's region arguments."""

    value: ir.Value
    size: ir.Value
    src: str
    dst: str
    policy: LinkPolicy
    result_type: ir.Type | None = None
    carried: bool = False


class Lowering:
    name: ClassVar[str]
    caller_buffer: ClassVar[str | None] = None
    caller_buffer_into_output: ClassVar[str | None] = None

    def applies(self, site: Site) -> bool:  # pragma: no cover
        raise NotImplementedError

    def lower(self, site: Site) -> ir.Value:  # pragma: no cover
        raise NotImplementedError

    def applies_into_output(self, site: Site, update) -> bool:
        return False

    def lower_into_output(self, site: Site, update) -> ir.Value:  # pragma: no cover
        raise NotImplementedError

    def finish(self) -> None:
        """Called once every crossing of the module is lowered."""
