"""sha256 of every .vmfb under DIR, with DIR's own path replaced by ``OUT``,
and the text of every ``.failed`` mark (vmfb_digests_programs.py).

    python test/e2e/vmfb_digests.py DIR     # one line per vmfb, sorted by path

The vmfb of a program built from DIR/x.mlir holds that path in its source
locations. Replacing it is not enough to compare builds in different
folders (the ZIP checksums and mdc's seal cover the path too): compare
builds made from the same checkout path into the same DIR (vmfb_digests.sh).
"""

from __future__ import annotations

import hashlib
import os
import sys


def digests(root: str) -> list[str]:
    root = os.path.abspath(root)
    lines = []
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".failed"):
                with open(os.path.join(folder, name)) as f:
                    lines.append(f"FAILED {f.read().strip()}  {os.path.relpath(os.path.join(folder, name), root)}")
            if name.endswith(".vmfb"):
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    data = f.read().replace(root.encode(), b"OUT")
                lines.append(f"{hashlib.sha256(data).hexdigest()}  {os.path.relpath(path, root)}")
    return sorted(lines, key=lambda line: line.split("  ", 1)[1])


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    print("\n".join(digests(sys.argv[1])))
