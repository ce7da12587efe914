"""On the GPU machine: a generation module's prefill and decode speed under
runtime flags, to tell what slows a module split between the CPU and the
GPU.

    python -m bench.gpu_generate_flags KIT SCRATCH NAME [NAME ...] [--try="FLAGS"] ...

KIT is a ``bench generate build`` kit and SCRATCH a ``bench generate run
--scratch`` folder that already holds the f32 archive (CONFIG_f32.irpa) and
the prompt. For each ``--try`` (a space-separated list of runtime flags,
iree.runtime.flags, parsed before any device opens; "" for none, the
default when no ``--try`` is given) and each module NAME, a process of its
own loads the module, generates 2 tokens to warm up and then 32, and prints
the second generation's prefill ms and decode tokens/s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def _child(kit: str, scratch: str, name: str, flags: list[str]) -> dict:
    import numpy as np

    import iree.runtime as rt

    if flags:
        rt.flags.parse_flags(*flags)
    from mdc.runtime_shim import load
    from mdc.runtime_shim.generate import generate

    with open(os.path.join(kit, "kit.json")) as f:
        meta = json.load(f)
    prompt = np.load(os.path.join(scratch, "prompt.npy"))
    archive = os.path.join(scratch, f"{meta['config']}_f32.irpa")
    began = time.perf_counter()
    with load(os.path.join(kit, f"{name}.vmfb"), meta["devices"], parameters=[f"model={archive}"]) as m:
        loaded = time.perf_counter() - began
        generate(m, prompt, 2)
        g = generate(m, prompt, 32)
    return {"load_s": loaded, "prefill_ms": g.prefill_s * 1e3, "decode_per_s": g.decode_tokens_per_s}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(_child(argv[1], argv[2], argv[3], argv[4:])))
        return 0
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    tries = [a.split("=", 1)[1].split() for a in argv if a.startswith("--try=")] or [[]]
    positional = [a for a in argv if not a.startswith("--try=")]
    if len(positional) < 3 or any(a.startswith("-") for a in positional):
        usage = next(line for line in __doc__.splitlines() if "python -m" in line)
        print(f"usage: {usage.strip()}", file=sys.stderr)
        return 2
    kit, scratch, *names = positional
    print(f"{'module':14} {'load s':>7} {'prefill ms':>10} {'decode/s':>9}  flags")
    for flags in tries:
        for name in names:
            try:
                r = subprocess.run([sys.executable, "-m", "bench.gpu_generate_flags", "--child", kit, scratch, name,
                                    *flags], capture_output=True, text=True, timeout=180)
            except subprocess.TimeoutExpired:
                print(f"{name:14} failed: no answer in 180 s  {' '.join(flags) or 'none'}")
                continue
            if r.returncode:
                print(f"{name:14} failed: {r.stderr.strip()[-600:]}  {' '.join(flags) or 'none'}")
                continue
            t = json.loads(r.stdout.strip().splitlines()[-1])
            print(f"{name:14} {t['load_s']:7.1f} {t['prefill_ms']:10.1f} {t['decode_per_s']:9.1f}  "
                  f"{' '.join(flags) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
