"""mdc-run's --input, --expected_output and --output values, as
iree-run-module reads and writes them.

Values (``--input``, ``--expected_output``), one flag each unless a file
holds several:

* a literal, ``4xf32=1,2,3,4`` (i1 takes 0/1/true/false, unlike stock), or
  a bare number for a scalar argument;
* ``SHAPExTYPE=@file`` or ``SHAPExTYPE=+file``: the file's raw bytes (any
  name), from its start (``@``) or from where the previous value read from
  the same file stopped (``+``);
* ``@file.npy`` (its first array), ``+file.npy`` (the next one) or
  ``*file.npy`` (every array left: none or more values);
* ``(ignored)``, for an --expected_output whose result is not checked.

Outputs (``--output``, one per result): empty (skipped), ``-`` (printed),
``@FILE`` (written afresh) or ``+FILE`` (appended): a ``.npy`` name gets a
numpy array (a scalar as a 0-d array), any other name the raw bytes of the
value. Files are written when every result is in, each atomically (an
appended file too: the old bytes and the new ones, renamed into place), so
no reader sees a half-written file.
"""

from __future__ import annotations

import io
import math
import os
from typing import Optional, Sequence

import numpy as np

from mdc.contract.atomic_write import CannotWrite, is_written_directly, why_unwritable, write_atomically

from . import literals, values
from .errors import ShimError, short

IGNORED = "(ignored)"
NPY_MAGIC = b"\x93NUMPY"


class FileReads:
    """The files values are read from, each with where its next ``+``
    read starts (iree-run-module shares one stream per file across flags)."""

    def __init__(self):
        self._open: dict[str, object] = {}

    def at(self, flag: str, path: str, restart: bool):
        """The file ``path``, positioned at its start (``restart``) or
        where the last read of it ended."""
        f = self._open.get(path)
        if f is None:
            try:
                f = self._open[path] = open(path, "rb")
            except OSError as e:
                raise ShimError(f"{flag}: cannot read {path}: {e.strerror}") from None
        if restart:
            f.seek(0)
        return f

    def close(self) -> None:
        for f in self._open.values():
            f.close()
        self._open.clear()


def read_values(flag: str, texts: Sequence[str], declared: Sequence, files: FileReads) -> list:
    """The values ``texts`` give, in order: (array, HAL element type) per
    tensor, a number per scalar (declared[i].type names the i-th value's
    type), IGNORED per ``(ignored)`` expected output."""
    out: list = []
    for text in texts:
        where = f"{flag}={text}"
        text = text.strip()
        if text[:1] in ("@", "+", "*"):
            out += [(a, values.hal_type_for_dtype(a.dtype)) for a in _read_npy(where, text, files)]
        elif text == IGNORED and flag == "--expected_output":
            out.append(IGNORED)
        elif text in ("(null)", IGNORED) or text.startswith("&"):
            raise ShimError(f"{where}: null and output-storage (&...) inputs are not supported: mdc-run "
                            "gives every argument as a buffer view on its declared device (give an "
                            "iree.abi.output argument's storage as an ordinary input)")
        else:
            value = declared[len(out)] if len(out) < len(declared) else None
            out.append(_read_one(where, text, value, files))
    return out


def _read_one(where: str, text: str, value, files: FileReads):
    if value is not None and value.type in values.SCALAR_TYPES:
        return literals.parse_scalar(text, value.type, f"{where} (%{value.name})")
    head, _, data = text.partition("=")
    if data.strip()[:1] in ("@", "+"):
        return _read_raw(where, head, data.strip(), files)
    return literals.parse_literal(text)


def _read_raw(where: str, head: str, source: str, files: FileReads) -> tuple[np.ndarray, int]:
    """SHAPExTYPE=@file / =+file: the value's bytes straight from the file."""
    shape, hal_type = literals.parse_shape_and_type(head, where)
    dtype = values.numpy_dtype(hal_type)
    nbytes = math.prod(shape) * dtype.itemsize
    path = source[1:]
    f = files.at(where, path, restart=source[0] == "@")
    start = f.tell()
    data = f.read(nbytes)
    if len(data) < nbytes:
        raise ShimError(f"{where}: {path} has {len(data)} bytes from offset {start}, and "
                        f"{head.strip()} takes {nbytes}")
    array = values.aligned_array(np.frombuffer(data, dtype).reshape(shape).copy())
    return array, hal_type


def _read_npy(where: str, text: str, files: FileReads) -> list[np.ndarray]:
    """@file.npy / +file.npy: one array; *file.npy: every array left."""
    path = text[1:]
    f = files.at(where, path, restart=text[0] == "@")
    size = os.fstat(f.fileno()).st_size
    arrays = []
    while True:
        if text[0] == "*" and f.tell() >= size:
            return arrays
        arrays.append(_one_npy(where, path, f))
        if text[0] != "*":
            return arrays


def _one_npy(where: str, path: str, f) -> np.ndarray:
    start = f.tell()
    if f.read(len(NPY_MAGIC)) != NPY_MAGIC:
        # As iree-run-module: @file is a .npy file, nothing else (np.load
        # would call a text file "pickled data").
        what = "is not a .npy file (no numpy header)" if start == 0 else \
            f"has no further .npy array at offset {start}"
        raise ShimError(f"{where}: {path} {what}; only numpy .npy files are supported, "
                        "e.g. written by numpy.save")
    f.seek(start)
    try:
        array = np.lib.format.read_array(f, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise ShimError(f"{where}: cannot read {path}: {short(e)}") from None
    return values.aligned_array(array)


# -- outputs ------------------------------------------------------------------


def check_outputs(specs: Optional[Sequence[str]], function: str, n_results: int) -> None:
    """The --output flags fit the function and name places that can be
    written, before anything runs."""
    if specs is None:
        return
    if len(specs) != n_results:
        raise ShimError(f"{len(specs)} --output given but @{function} returns {n_results} result(s)")
    for spec in specs:
        if spec in ("", "-"):
            continue
        if spec[:1] not in ("@", "+") or len(spec) < 2:
            raise ShimError(f"--output={spec}: expected @file.npy or @file.bin (written afresh), "
                            "+file (appended), - (printed) or nothing (skipped)")
        why = why_unwritable(spec[1:])
        if why:
            raise ShimError(f"--output={spec}: cannot write there: {why}")


def encoded(result, kind, path: str) -> bytes:
    """A result as a file named ``path`` holds it: an .npy array (a scalar
    as a 0-d array of its VM type), else its raw bytes."""
    if isinstance(kind, str):  # a scalar: (number, MLIR type)
        array = np.asarray(values.SCALAR_TYPES[kind](result))
    else:
        # np.asarray keeps a 0-d result 0-d (np.ascontiguousarray makes it
        # shape (1,), which stock's tensor<f32> output is not).
        array = np.asarray(result, order="C")
    if not path.endswith(".npy"):
        return array.tobytes()
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def write_outputs(writes: Sequence[tuple[str, bytes]]) -> None:
    """(``@path`` or ``+path``, bytes) in flag order: each file written once,
    atomically, with what those flags leave in it."""
    contents: dict[str, bytearray] = {}
    for spec, data in writes:
        path = spec[1:]
        if spec[0] == "@":
            contents[path] = bytearray(data)
            continue
        if path not in contents:
            contents[path] = bytearray(_existing(spec, path))
        contents[path] += data
    for path, data in contents.items():
        save_atomically(path, bytes(data))


def _existing(spec: str, path: str) -> bytes:
    if is_written_directly(path):  # a device or pipe: appending is writing
        return b""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""
    except OSError as e:
        raise ShimError(f"--output={spec}: cannot append to {path}: {e.strerror}") from None


def save_atomically(path: str, data: bytes) -> None:
    """Write next to the destination, then rename into place, so a reader
    never sees a partial file."""
    try:
        write_atomically(path, data, prefix=".mdc-run-", durable=True)
    except CannotWrite as e:
        raise ShimError(f"--output: cannot write {path}: {e}") from None
