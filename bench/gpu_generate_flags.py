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

import sys
import time

from .kit_child import child_or_help, load_module, run_child, usage


def _child(kit: str, scratch: str, name: str, flags: list[str]) -> dict:
    from mdc.runtime_shim.generate import generate

    began = time.perf_counter()
    module, prompt = load_module(kit, scratch, name, flags)
    with module as m:
        loaded = time.perf_counter() - began
        generate(m, prompt, 2)
        g = generate(m, prompt, 32)
    return {"load_s": loaded, "prefill_ms": g.prefill_s * 1e3, "decode_per_s": g.decode_tokens_per_s}


def main(argv: list[str]) -> int:
    status = child_or_help(argv, __doc__, _child)
    if status is not None:
        return status
    tries = [a.split("=", 1)[1].split() for a in argv if a.startswith("--try=")] or [[]]
    positional = [a for a in argv if not a.startswith("--try=")]
    if len(positional) < 3 or any(a.startswith("-") for a in positional):
        return usage(__doc__)
    kit, scratch, *names = positional
    print(f"{'module':14} {'load s':>7} {'prefill ms':>10} {'decode/s':>9}  flags")
    for flags in tries:
        for name in names:
            t = run_child("bench.gpu_generate_flags", kit, scratch, name, flags, 180)
            said = " ".join(flags) or "none"
            if isinstance(t, str):
                print(f"{name:14} {t}  {said}")
                continue
            print(f"{name:14} {t['load_s']:7.1f} {t['prefill_ms']:10.1f} {t['decode_per_s']:9.1f}  {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
