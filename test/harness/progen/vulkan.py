"""Stock IREE's own failures on Vulkan: which verdicts put a failure on
stock IREE's side rather than mdc's."""

from __future__ import annotations

import os
import re

import numpy as np

from .commands import cmd_text, failed, run_cmd, sh, tool
from .oracle import compare_reference
from .program import Program
from .values import FLOATS


# Stock IREE 3.13 computes narrow types wrongly on Vulkan, on one Vulkan
# device alone (test_vulkan.py's two canaries, on lavapipe; on an H200 with
# NVIDIA's Vulkan driver, gpu_random --all-on-gpu showed stock IREE alone
# wrong on the same f16 and i8 programs): f16 arithmetic, and the bytes
# after a tensor's last whole 32-bit word of 8- and 16-bit results.
# A program with f16 or i8 values whose numbers on Vulkan are off is
# reported under this status, a stock-side one; the same programs' crossings
# are checked bit for bit on the CPU pairs (the local target).
VULKAN_NARROW = {"f16", "i8"}
_NARROW_TYPE = re.compile(r"\b(?:tensor<(?:[0-9?]+x)*)?(f16|i8)\b")


def has_narrow_values(prog: "Program") -> bool:
    """Whether any value of the program is f16 or i8: its features, or an
    intermediate only a conversion makes (f32 -> f16 -> f32 is all f32 to
    the features, and still computed in f16 on Vulkan)."""
    return bool(VULKAN_NARROW & prog.features) or bool(_NARROW_TYPE.search(prog.text()))


VULKAN_NARROW_STATUS = "stock-vulkan-narrow-mismatch (IREE's f16/i8 on Vulkan)"


VULKAN_COMPILE_STATUS = "stock-vulkan-compile-failed (IREE's Vulkan codegen, stock too)"


def first_error(text: str) -> str:
    m = re.search(r"error: (.*)", text)
    return re.sub(r"\d+|/\S+", "_", m.group(1))[:100] if m else ""


def _stock_vulkan_compile_cmd(src: str, devices: list[str], model: str, out: str) -> list[str]:
    """Stock iree-compile with every device of the program on the one
    Vulkan device: no mdc, no crossing."""
    return [tool("iree-compile"), src, *[f"--iree-hal-target-device={d}=vulkan[0]" for d in devices],
            "--iree-opt-const-eval=false", f"--iree-execution-model={model}", "-o", out]


def stock_fails_on_vulkan_alone(src: str, work: str, devices: list[str], model: str, rm) -> str:
    """The stock reproduction of a Vulkan-only compile failure: stock
    iree-compile with every device on Vulkan (no mdc, no crossing). Its
    report when it fails with mdc's first error, else ''."""
    r = sh(_stock_vulkan_compile_cmd(src, devices, model, os.path.join(work, "stock-vulkan.vmfb")))
    ours = first_error(rm.stderr)
    if r.returncode and ours and first_error(r.stderr) == ours:
        return "stock reproduction, every device on Vulkan: " + failed("stock iree-compile", r)
    return ""


VULKAN_STOCK_NUMBERS_STATUS = "stock-vulkan-mismatch (stock IREE alone on this Vulkan device gives mdc's numbers)"


def stock_wrong_on_vulkan_alone(prog: Program, work: str, flags: list[str], got_outs: list[str],
                                 reference: list) -> str:
    """The stock reproduction of wrong numbers on Vulkan: the program alone,
    compiled by stock iree-compile with every device on the one Vulkan
    device (no crossing, no mdc) and run there. Its report when stock's
    numbers are outside the reference on every result where mdc's are, and
    mdc's are stock's there (within the error bound, integers exactly);
    else '' (mdc's own bug, or stock could not say)."""
    src, vmfb = os.path.join(work, f"{prog.name}.vk.mlir"), os.path.join(work, f"{prog.name}.stock-vulkan.vmfb")
    with open(src, "w") as f:
        f.write(prog.text())
    r = sh(_stock_vulkan_compile_cmd(src, prog.devices(), prog.model, vmfb))
    if r.returncode:
        return ""
    outs = [os.path.join(work, f"{prog.name}.stock-vulkan{k}.npy") for k in range(len(prog.results))]
    for out in outs:
        if os.path.exists(out):
            os.unlink(out)
    if sh(run_cmd("iree-run-module", vmfb, prog, flags, outs, ["vulkan"]), timeout=120).returncode:
        return ""
    problems = []
    for k, (v, _) in enumerate(prog.results):
        want, bound = reference[k]
        got, stock = np.load(got_outs[k]), np.load(outs[k])
        if compare_reference(got, want, bound, v.dtype) is None:
            continue
        stock_bad = compare_reference(stock, want, bound, v.dtype)
        not_stock = compare_reference(got, stock.astype(np.float64 if v.dtype in FLOATS else np.int64), bound,
                                      v.dtype)
        if stock_bad is None or not_stock is not None:
            return ""
        problems.append(f"result {k} (%{v.name}): {stock_bad}")
    if not problems:
        return ""
    return ("stock reproduction, every device on Vulkan, gives mdc's numbers: "
            + cmd_text(r.args) + "\n" + "\n".join(problems))
