"""The files a compile reads and writes: its input is a file, and no output
(``-o``, ``--report``, ``--graph``, a ``--dump-stages`` file, or
``CompileResult.save``) is that input under another spelling. No IREE
imports."""

from __future__ import annotations

import os

from .options import UsageError


def same_file(path: str, other: str) -> bool:
    """Whether ``path`` and ``other`` are one file: the same path once
    resolved, or, where both exist, the same inode (a hard link too)."""
    try:
        if os.path.realpath(path) == os.path.realpath(other):
            return True
        return os.path.exists(path) and os.path.exists(other) and os.path.samefile(path, other)
    except (OSError, ValueError):
        return False


def check_input(path: str) -> None:
    """``path`` names a file to read (UsageError if not)."""
    if not os.path.exists(path):
        raise UsageError(f"no such input file: {path}")
    if os.path.isdir(path):
        raise UsageError(f"input is a directory: {path}")


def check_not_input(flag: str, path, input_path, written=None) -> None:
    """An output (``written``, else ``path``) is not the input file under
    another spelling (``./my.mlir``, a symbolic or hard link): writing it
    would replace the program with its output (stock iree-compile then
    deletes the source)."""
    written = path if written is None else written
    if path in (None, "-") or input_path in (None, "-") or not same_file(written, input_path):
        return
    what = f"{flag} {path}" if written == path else f"{flag}={path} would write {written}, which"
    instead = {"-o": "name another output, e.g. -o OUT.vmfb",
               "--dump-stages": "name another directory"}.get(flag, "name another file")
    raise UsageError(f"{what} is the input file {input_path}: that would overwrite the program; {instead}")
