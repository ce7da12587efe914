"""Writes to OUT the first of N single-bit flips of MODULE (the offsets
corrupt_vmfb.py uses) on which stock iree-run-module dies of a signal, and
so does mdc-run's body run without its fork (MDC_NO_FORK=1): a flip can
crash one runtime client and not the other (the Python runtime reads a
module differently). Prints the flip. Exits 1 if none does. Usage:
find_crashing_flip.py MODULE OUT N -- IREE-RUN-MODULE-ARGS..."""
import os
import subprocess
import sys

vmfb, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
extra = sys.argv[sys.argv.index("--") + 1:]
data = open(vmfb, "rb").read()
for k in range(n):
    offset, bit = (k * 7919) % len(data), k % 8
    blob = bytearray(data)
    blob[offset] ^= 1 << bit
    with open(out, "wb") as f:
        f.write(blob)
    try:
        r = subprocess.run(["iree-run-module", f"--module={out}", *extra], capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        continue
    # A signal: negative, or 128+N from a shell, or 256-N from the Python
    # launcher of the pip package's iree-run-module.
    sig = -r.returncode if r.returncode < 0 else (r.returncode - 128 if 128 < r.returncode < 160 else
                                                   256 - r.returncode if r.returncode > 224 else 0)
    if sig not in (4, 6, 7, 8, 11):  # SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV
        continue
    try:
        unforked = subprocess.run(["mdc-run", f"--module={out}", *extra], capture_output=True, timeout=20,
                                  env={**os.environ, "MDC_NO_FORK": "1"})
    except subprocess.TimeoutExpired:
        continue
    if unforked.returncode < 0:
        print(f"stock iree-run-module: signal {sig} at offset {offset} bit {bit}")
        sys.exit(0)
print(f"no flip of {n} crashes stock iree-run-module")
sys.exit(1)
