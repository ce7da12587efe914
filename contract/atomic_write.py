"""Writing an output file so that no reader ever sees half of it: the bytes
go to a new file beside the destination, which is then renamed into place,
and a failure removes it. mdc-compile, mdc-opt and mdc-run all write their
outputs this way.

A path is written as stock tools write it, never replaced by something
else: through a symbolic link, the file it points at is the one replaced
(a dangling link's target is created); a character device or a FIFO
(/dev/null, a pipe) and a name for a descriptor the caller holds open
(/dev/stdout, /dev/fd/N, which a shell redirection points at) are written
directly; anything else that is not a regular file (a socket, a block
device) is refused. No IREE imports."""

from __future__ import annotations

import os
import stat
import sys
import tempfile


class CannotWrite(Exception):
    """The destination cannot be written; the message says why (the
    caller names the file)."""


# What a path may name besides a regular file, by how it is written.
_WRITTEN_DIRECTLY = {stat.S_IFCHR: "character device", stat.S_IFIFO: "FIFO"}
_REFUSED = {stat.S_IFDIR: "directory", stat.S_IFSOCK: "socket", stat.S_IFBLK: "block device"}


def why_unwritable(path: str) -> str | None:
    """Why no output can be written at ``path`` (a directory, a socket, a
    block device, a folder that does not exist), or None."""
    try:
        kind = stat.S_IFMT(os.stat(path).st_mode)
    except FileNotFoundError:
        directory = os.path.dirname(_target(path))
        return None if os.path.isdir(directory) else f"no directory {directory}"
    except OSError as e:
        return e.strerror
    if kind in _REFUSED:
        return f"it is a {_REFUSED[kind]}" + ("" if kind == stat.S_IFDIR else ", not a regular file")
    return None


def is_written_directly(path: str) -> bool:
    """``path`` is a character device, a FIFO or a name for an open
    descriptor: bytes go straight to it, with no temporary file (and
    there is nothing to read back from it or to remove)."""
    try:
        kind = stat.S_IFMT(os.stat(path).st_mode)
    except OSError:
        return False
    return kind in _WRITTEN_DIRECTLY or _names_a_descriptor(path)


def write_atomically(path: str, data: bytes, *, prefix: str = ".mdc-", durable: bool = False) -> None:
    """Writes ``data`` to ``path`` through a temporary file in its target's
    folder (named ``prefix``...), renamed into place; ``durable``: synced
    to disk before the rename. The file gets the mode a plain new file
    would (mkstemp makes it 0600). A character device, FIFO or open
    descriptor's name is written directly (see the module's docstring).
    CannotWrite when ``path`` is not writable (why_unwritable) or its
    folder takes no new file; anything else raised while writing leaves
    no temporary file behind."""
    why = why_unwritable(path)
    if why:
        raise CannotWrite(why)
    if is_written_directly(path):
        _write_directly(path, data)
        return
    target = _target(path)
    directory = os.path.dirname(target)
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
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove_output(path: str) -> None:
    """After a failed run: removes the regular file ``path`` names (through
    a symbolic link, the file it points at; the link stays), so that no
    output of an earlier run is taken for this one's. A device, FIFO,
    descriptor or anything else that is not a regular file is left alone."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return
    if regular and not _names_a_descriptor(path):
        try:
            os.unlink(_target(path))
        except OSError:
            pass


def _target(path: str) -> str:
    """The absolute path of the file ``path`` names, symbolic links followed."""
    return os.path.realpath(os.path.abspath(path))


def _names_a_descriptor(path: str) -> bool:
    """``path`` leads through /proc (/dev/stdout, /dev/fd/N, /proc/self/fd/N):
    it names a descriptor the process holds open, e.g. a shell's
    redirection, which is written through, not replaced."""
    for _ in range(40):  # the kernel's own limit on links followed
        path = os.path.abspath(path)
        if (os.path.realpath(os.path.dirname(path)) + "/").startswith("/proc/"):
            return True
        if not os.path.islink(path):
            return False
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return False


def _write_directly(path: str, data: bytes) -> None:
    sys.stdout.flush()  # what the tool printed comes first, should ``path`` be stdout
    try:
        with open(path, "ab") as f:  # a descriptor's file: what the caller's redirection left
            f.write(data)
    except OSError as e:
        raise CannotWrite(e.strerror) from None
