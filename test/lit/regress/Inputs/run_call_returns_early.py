"""Calls @step(x, w, s, pos) of iree_call_returns_before_global_store.mlir
for pos 0..7 with x = pos + 1 and s = 0, each x a 64-byte aligned array
that the caller overwrites with -100 as soon as the call returns, then
@read, and prints whether @acc holds the values given
(`@acc == numpy: True`) and how many slots hold the -100 written after
the call returned.

    run_call_returns_early.py stock OUT.vmfb   (stock iree.runtime, local-task;
        x imported zero-copy with HalAllocator.import_host_allocation)
    run_call_returns_early.py mdc OUT.vmfb     (mdc's runtime shim, local-task)
"""

import sys

import numpy as np

SLOTS = 8
N = 384


def aligned(values) -> np.ndarray:
    values = np.asarray(values, np.float32)
    raw = np.empty(values.nbytes + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    out = raw[start:start + values.nbytes].view(np.float32).reshape(values.shape)
    out[...] = values
    return out


def stock(vmfb):
    import iree.runtime as rt
    config = rt.Config("local-task")
    with open(vmfb, "rb") as f:
        module = rt.load_vm_modules(rt.VmModule.copy_buffer(config.vm_instance, f.read()), config=config)[-1]
    allocator = config.device.allocator

    def view(array):
        buffer = allocator.import_host_allocation(
            array, memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
            allowed_usage=int(rt.BufferUsage.DEFAULT))
        return rt.HalBufferView(buffer, list(array.shape), rt.HalElementType.FLOAT_32), buffer

    def step(x, w, s, pos):
        (vx, bx), (vw, bw), (vs, bs) = view(x), view(w), view(s)
        module.step(vx, vw, vs, pos)

    return step, lambda: np.asarray(module.read().to_host())


def mdc(vmfb):
    from mdc.runtime_shim import load
    module = load(vmfb, devices=["local-task"])
    return module.step, lambda: np.asarray(module.read())


def main(kind, vmfb):
    step, read = {"stock": stock, "mdc": mdc}[kind](vmfb)
    w = aligned(np.full((N, N), 1e-3))
    s = aligned(np.zeros(1))
    xs = [aligned([pos + 1.0]) for pos in range(SLOTS)]
    for pos, x in enumerate(xs):
        step(x, w, s, pos)
        x[0] = -100.0  # the caller's array is its own again once the call returned
    got = read()
    want = np.arange(1, SLOTS + 1, dtype=np.float32)
    print(f"@acc == numpy: {got.tobytes() == want.tobytes()}")
    print(f"slots written after the call returned: {'some' if (got == -100).any() else 'none'}")


if __name__ == "__main__":
    main(*sys.argv[1:])
