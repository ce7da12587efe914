"""Calls @step(x0, x1, x2, pos) of a vmfb three times (pos 0, 1, 2; xi = 10 i
+ pos + 1) and then @read, and prints, for each global @read returns,
whether it equals what numpy computes: `@k0 == numpy: True`.

    run_state_calls.py stock OUT.vmfb   (stock iree.runtime, local-task)
    run_state_calls.py mdc OUT.vmfb DEVICE...   (mdc's runtime shim)
"""

import sys

import numpy as np

NAMES = ["@k0", "@k1", "@k2", "@zeros"]


def functions(kind, vmfb, devices):
    if kind == "stock":
        import iree.runtime as rt
        config = rt.Config("local-task")
        with open(vmfb, "rb") as f:
            module = rt.load_vm_modules(rt.VmModule.copy_buffer(config.vm_instance, f.read()), config=config)[-1]
        return module.step, lambda: [np.asarray(v.to_host()) for v in module.read()]
    from mdc.runtime_shim import load
    module = load(vmfb, devices=devices)
    return module.step, lambda: [np.asarray(v) for v in module.read()]


def main(kind, vmfb, *devices):
    step, read = functions(kind, vmfb, list(devices))
    want = [np.zeros(8, np.float32) for _ in NAMES]
    for pos in range(3):
        xs = [np.array([10 * i + pos + 1], np.float32) for i in range(3)]
        step(*xs, pos)
        for i, x in enumerate(xs):
            want[i][pos] = x[0]
    for name, got, expected in zip(NAMES, read(), want):
        print(f"{name} == numpy: {got.tobytes() == expected.tobytes()}  {got.tolist()}")


if __name__ == "__main__":
    main(*sys.argv[1:])
