"""How deep a source's brackets nest, checked before IREE parses it.

IREE 3.13.0's MLIR parser recurses on the calling thread's stack once per
nested region, attribute list or type. Some 2,000 nested regions (or some
10,000 nested ``[``) overflow the default 8 MiB stack and the process dies
of SIGSEGV, plain iree-compile included. No real program nests anywhere
near that deep, so mdc refuses text that nests deeper than
:data:`MAX_NESTING` and says where, before IREE sees it. MLIR bytecode is
not checked.
"""

from __future__ import annotations

import re

from mdc.passes.infra.diagnostics import MdcError

MAX_NESTING = 1000

# Strings (with their escapes) and line comments are skipped whole; of the
# rest only ( { [ and their closers count. '<' is left out: it is not
# always an opening bracket ('->', '<=' in affine sets).
_TOKENS = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"?|//[^\n]*|[({\[\]})]')
_OPENERS = "({["
_BYTECODE_MAGIC = b"ML\xefR"


def nesting(text: str, limit: int) -> tuple[int, int]:
    """(greatest nesting depth of ``text``, offset of the bracket that
    first goes past ``limit``, or -1 when none does). A closer with
    nothing open is ignored."""
    depth, deepest, past = 0, 0, -1
    for m in _TOKENS.finditer(text):
        c = m.group()
        if len(c) != 1:
            continue
        if c in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
            if depth > limit and past < 0:
                past = m.start()
        elif depth:
            depth -= 1
    return deepest, past


def check_nesting(text: str, name: str, limit: int = MAX_NESTING) -> None:
    """Raises MdcError, located at the bracket that first goes past
    ``limit``, when ``text`` nests deeper than that."""
    depth, offset = nesting(text, limit)
    if offset < 0:
        return
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    raise MdcError(
        f"the input nests brackets {depth} deep; mdc accepts at most {limit}",
        location=f"{name}:{line}:{column}",
        notes=["IREE 3.13.0's parser runs out of stack and crashes on nesting this deep; "
               "an unclosed '{', '(' or '[', repeated, does this"],
    )


def check_file_nesting(path: str, limit: int = MAX_NESTING) -> None:
    """check_nesting on the file at ``path`` unless it is MLIR bytecode
    (or cannot be read: the parser says so then)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return
    if data.startswith(_BYTECODE_MAGIC):
        return
    check_nesting(data.decode("utf-8", errors="replace"), path, limit)
