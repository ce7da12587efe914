"""Writing an output file so that no reader ever sees half of it: the bytes
go to a new file beside the destination, which is then renamed into place,
and a failure removes it. mdc-compile, mdc-opt and mdc-run all write their
outputs this way. No IREE imports."""

from __future__ import annotations

import os
import tempfile


class CannotWrite(Exception):
    """The destination cannot be written; the message says why (the
    caller names the file)."""


def write_atomically(path: str, data: bytes, *, prefix: str = ".mdc-", durable: bool = False) -> None:
    """Writes ``data`` to ``path`` through a temporary file in its folder
    (named ``prefix``...), renamed into place; ``durable``: synced to disk
    before the rename. The file gets the mode a plain new file would
    (mkstemp makes it 0600). CannotWrite when ``path`` is a folder or its
    folder takes no new file; anything else raised while writing leaves
    no temporary file behind."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise CannotWrite("it is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, dir=directory)
    except OSError as e:
        raise CannotWrite(f"{e.strerror} ({directory})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
