"""Runs mdc-run on copies of a vmfb with one bit flipped, at N offsets spread
over the file (deterministic), and counts the runs that end in a Python
traceback or a crash signal, the
runs refused by the seal check, and the other outcomes. Usage: corrupt_vmfb.py MODULE.vmfb WORKDIR N -- MDC-RUN-ARGS..."""
import os
import subprocess
import sys

vmfb, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
extra = sys.argv[sys.argv.index("--") + 1:]
data = open(vmfb, "rb").read()
os.makedirs(work, exist_ok=True)
tracebacks, signals, hangs, refused, ran, other, first = 0, 0, 0, 0, 0, 0, {}
for k in range(n):
    offset = (k * 7919) % len(data)
    bit = k % 8
    blob = bytearray(data)
    blob[offset] ^= 1 << bit
    path = os.path.join(work, "flipped.vmfb")
    with open(path, "wb") as f:
        f.write(blob)
    try:
        r = subprocess.run(["mdc-run", f"--module={path}", *extra], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        hangs += 1
        first.setdefault("hang", f"offset {offset} bit {bit}: no exit within 20s")
        continue
    if "Traceback (most recent call last)" in r.stdout + r.stderr:
        tracebacks += 1
        first.setdefault("traceback", f"offset {offset} bit {bit}: {r.stderr.strip().splitlines()[-1]}")
    if r.returncode < 0:
        signals += 1
        first.setdefault("signal", f"offset {offset} bit {bit}: signal {-r.returncode}")
    elif r.returncode == 0:
        ran += 1
    elif "is damaged: its bytes do not match" in r.stderr:
        refused += 1
    else:
        other += 1
        first.setdefault("other", f"offset {offset} bit {bit}: rc {r.returncode}: {r.stderr.strip().splitlines()[0] if r.stderr.strip() else ''}")
    lines = r.stderr.strip().splitlines()
    if r.returncode > 0 and (not lines or not lines[0].startswith("mdc-run: error: ")):
        first.setdefault("bad message", f"offset {offset} bit {bit}: {r.stderr.strip()[:200]!r}")
print(f"tracebacks: {tracebacks}")
print(f"signals: {signals}")
print(f"hangs: {hangs}")
print(f"refused as damaged: {refused}")
print(f"ran: {ran}")
print(f"other errors: {other}")
for kind, text in first.items():
    print(f"first {kind}: {text}")
