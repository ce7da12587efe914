"""MdcError, the one-line user error every mdc tool prints, UsageError,
the one for a command line that is wrong (status 2), and format_location,
which gives an error its ``file:line:col``.

It lives in contract/, not in passes/, because contract/ modules raise it
too (machine_profile.py's ProfileError is one) and contract/ imports
nothing of passes/ or pipeline/: passes/infra/diagnostics.py re-exports the
names, so every existing ``from mdc.passes.infra.diagnostics import MdcError``
gets this same class. No IREE imports.
"""

from __future__ import annotations

import re

_FILE_LINE_COL = re.compile(r'"([^"]+)":(\d+):(\d+)')


def format_location(loc) -> str | None:
    """``file:line:col`` for the first file position in an MLIR location."""
    if loc is None:
        return None
    m = _FILE_LINE_COL.search(str(loc))
    if not m:
        return None
    return f"{m.group(1)}:{m.group(2)}:{m.group(3)}"


class MdcError(Exception):
    """A user-facing error: one line, an optional source location, notes."""

    def __init__(self, message: str, location=None, notes: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.location = location if isinstance(location, str) or location is None else format_location(location)
        self.notes = list(notes or [])

    def render(self, tool: str) -> str:
        where = f"{self.location}: " if self.location else f"{tool}: "
        lines = [f"{where}error: {self.message}"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


class UsageError(MdcError):
    """A malformed command line: a flag unknown, malformed, missing or
    contradicting another (or the program it is given: a ``--max-dim`` that
    names no dynamic dimension of it), or a file it names that cannot be
    used. The tools exit with status 2 for it (1 for everything else)."""


def read_text_file(path: str, origin: str, error: type) -> str:
    """The text of the file ``path``, a contract file a user names (a
    machine profile, a costs file): a missing, unreadable or non-UTF-8 file
    raises ``error`` (an MdcError) as one line that starts with ``origin``."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise error(f"{origin}: no such file") from None
    except UnicodeDecodeError:
        raise error(f"{origin}: not JSON (not UTF-8 text)") from None
    except OSError as e:
        raise error(f"{origin}: cannot read it ({e.strerror})") from None
