"""Errors that passes and the pipeline report to users.

A :class:`MdcError` carries a one-line message, an optional MLIR location
and a few notes. Front ends print it as ``file:line:col: error: message``;
nothing in mdc shows users a Python traceback for their own mistakes.
"""

from __future__ import annotations

# Defined in contract/ so that contract modules can raise it without
# importing passes/; re-exported here, where the passes and tools import it.
from mdc.contract.errors import MdcError, UsageError, format_location

__all__ = ["MdcError", "UsageError", "format_location", "render_warning"]


def render_warning(tool: str, location: str | None, message: str) -> str:
    """One warning line, as MdcError.render writes an error's first line."""
    return f"{location or tool}: warning: {message}"
