"""Fuzzing mdc's command lines with bad inputs.

    python test/e2e/fuzz.py run [--seed S] [--count N] [--jobs 2] [--keep DIR]
    python test/e2e/fuzz.py show --seed S --index I      # one case: files and command line
    python test/e2e/fuzz.py minimize --seed S --index I  # smallest input still breaking the rule

Drives ``mdc-compile``, ``mdc-opt`` and ``mdc-run`` with mutated lit and e2e
inputs (lines deleted, duplicated or swapped, characters flipped, files
truncated, binary garbage, absurd and negative shapes, unknown ops and
attributes), with inconsistent device and link flags, and, for mdc-run, with
garbage, truncated and bit-flipped vmfbs, wrong device counts, functions,
inputs and outputs. Every case is seeded (MDC_FUZZ_SEED, else the time) and
must obey one rule (``check``):

* no Python traceback in the output;
* no hang (each command has a 60 s timeout);
* no crash signal (a negative return code);
* no partial output: the output directory, fresh for each case, holds
  nothing, or on success only the named output, complete (a vmfb that IREE
  loads, IR ending in a closing brace, a .npy numpy reads);
* on failure: a non-zero exit status and a short message (at most
  ``MAX_LINES`` lines and ``MAX_CHARS`` characters) whose first line (after
  any ``warning:`` lines) names the problem: it starts with
  ``mdc-compile: error:``, ``mdc-opt: error:`` or ``mdc-run: error:``, or
  with a ``FILE:LINE:COL: error:`` location.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from progen import limited, run_killing_group  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.dirname(sys.executable)
TIMEOUT = 60.0
MAX_LINES = 25
MAX_CHARS = 4000
TOOLS = ("mdc-compile", "mdc-opt", "mdc-run")


def tool(name: str) -> str:
    path = os.path.join(BIN, name)
    return path if os.path.exists(path) else (shutil.which(name) or name)


# ---------------------------------------------------------------------------
# Seeds: the corpus


def _mlir_files(*dirs) -> list[str]:
    out = []
    for d in dirs:
        for base, subdirs, files in os.walk(os.path.join(ROOT, d)):
            subdirs[:] = sorted(s for s in subdirs if s not in ("Output", "__pycache__"))
            out += [os.path.join(base, f) for f in sorted(files) if f.endswith(".mlir")]
    return out


def corpus() -> tuple[list[str], list[str]]:
    """(input-level programs for mdc-compile, stream/HAL-level IR for mdc-opt),
    sorted so that a seed means the same cases on every machine."""
    compile_inputs, opt_inputs = [], []
    for path in _mlir_files("examples", "test/e2e/programs", "test/lit"):
        text = open(path, encoding="utf-8", errors="replace").read()
        if "stream." in text or "util.func" in text or "hal.executable" in text:
            opt_inputs.append(path)
        else:
            compile_inputs.append(path)
    return compile_inputs, opt_inputs


# ---------------------------------------------------------------------------
# Mutations of text

GARBAGE_LINES = [
    '"foo.bar"() : () -> ()',
    "%x = arith.frobnicate %y : tensor<4xf32>",
    "func.func @",
    "}}}}",
    "%0 = flow.tensor.transfer %nope : tensor<4xf32> to #hal.device.promise<@device_zz>",
    "util.global private @device_a = #hal.device.target<\"local\", {ordinal = 99999999999 : index}> : !hal.device",
    "#map = affine_map<(d0) -> (d0 floordiv 0)>",
    "module attributes {stream.affinity.default = #hal.device.affinity<@nowhere>} {",
    "// -----",
    "\x00\x01\x02",
    "%c = arith.constant dense<1.0> : tensor<99999999999x99999999999xf32>",
    "func.func public @f(%a: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@>}) { return }",
    "%t = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_a, 7>",
    "stream.async.transfer",
    "iree.abi.affinity = 42",
    "\ufeff\u202e",
]
ABSURD_DIMS = ["99999999999", "0", "-1", "18446744073709551615", "9223372036854775807", "?x?x?x?x?x?x?x?x?", "1x" * 40 + "1"]


def mutate(text: str, rng: np.random.Generator, n: int = 1) -> tuple[str, list[str]]:
    """Apply `n` random mutations; returns (text, what was done)."""
    done = []
    for _ in range(n):
        lines = text.split("\n")
        kind = str(rng.choice(["delete", "duplicate", "swap", "flip", "truncate", "insert", "shape",
                               "rename_op", "attr", "device", "number", "delete_block"]))
        L = max(len(lines), 1)
        if kind == "delete" and lines:
            i = int(rng.integers(L))
            del lines[i]
            done.append(f"deleted line {i + 1}")
        elif kind == "delete_block" and lines:
            i = int(rng.integers(L))
            j = min(L, i + int(rng.integers(2, 8)))
            del lines[i:j]
            done.append(f"deleted lines {i + 1}-{j}")
        elif kind == "duplicate" and lines:
            i = int(rng.integers(L))
            lines.insert(i, lines[i])
            done.append(f"duplicated line {i + 1}")
        elif kind == "swap" and L > 1:
            i, j = (int(x) for x in rng.choice(L, 2, replace=False))
            lines[i], lines[j] = lines[j], lines[i]
            done.append(f"swapped lines {i + 1} and {j + 1}")
        elif kind == "flip" and text:
            chars = list(text)
            for _ in range(int(rng.integers(1, 4))):
                k = int(rng.integers(len(chars)))
                chars[k] = chr(int(rng.choice([int(rng.integers(32, 127)), int(rng.integers(0, 32)),
                                               int(rng.integers(128, 0x3000))])))
            text = "".join(chars)
            done.append("flipped characters")
            continue
        elif kind == "truncate" and text:
            k = int(rng.integers(len(text)))
            text = text[:k]
            done.append(f"truncated at character {k}")
            continue
        elif kind == "insert":
            i = int(rng.integers(L + 1))
            lines.insert(i, str(rng.choice(GARBAGE_LINES)))
            done.append(f"inserted a garbage line at {i + 1}")
        elif kind == "shape":
            shapes = list(re.finditer(r"tensor<([^>]*)>", text))
            if shapes:
                m = shapes[int(rng.integers(len(shapes)))]
                dims = m.group(1).split("x")
                if len(dims) > 1:
                    dims[int(rng.integers(len(dims) - 1))] = str(rng.choice(ABSURD_DIMS))
                else:
                    dims = [str(rng.choice(ABSURD_DIMS)), dims[0]]
                text = text[:m.start()] + "tensor<" + "x".join(dims) + ">" + text[m.end():]
                done.append(f"absurd shape tensor<{'x'.join(dims)}>")
                continue
        elif kind == "rename_op":
            ops = list(re.finditer(r"\b([a-z_]+)\.([a-z_]+)\b", text))
            if ops:
                m = ops[int(rng.integers(len(ops)))]
                new = str(rng.choice([m.group(1) + ".frobnicate", "nodialect." + m.group(2), m.group(0) + "_x"]))
                text = text[:m.start()] + new + text[m.end():]
                done.append(f"renamed {m.group(0)} to {new}")
                continue
        elif kind == "attr":
            attrs = list(re.finditer(r"#hal\.device\.promise<@(\w+)>", text))
            if attrs:
                m = attrs[int(rng.integers(len(attrs)))]
                new = str(rng.choice(["#hal.device.promise<@device_zz>", "#hal.device.promise<>", "#hal.device.bogus<@device_a>",
                                      "#hal.device.affinity<@device_a>", "unit", "#hal.device.promise<@device_a>",
                                      '"device_b"', "#hal.device.promise<@device_b, [1, 2]>"]))
                text = text[:m.start()] + new + text[m.end():]
                done.append(f"replaced {m.group(0)} with {new}")
                continue
            i = int(rng.integers(L))
            lines[i] = lines[i] + " {mdc.unknown_attr = #mdc.nonsense<42>}"
            done.append(f"unknown attribute on line {i + 1}")
        elif kind == "device":
            names = sorted(set(re.findall(r"@(device_\w+)", text)))
            if names:
                old = str(rng.choice(names))
                new = str(rng.choice(["device_q", "device_a", "device_b", "device_c", "a", "device_" + "x" * 200]))
                text = text.replace("@" + old, "@" + new)
                done.append(f"renamed @{old} to @{new}")
                continue
        elif kind == "number":
            nums = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", text))
            if nums:
                m = nums[int(rng.integers(len(nums)))]
                new = str(rng.choice(["0", "-1", "99999999999999999999", "4294967296", "3.5", "0x7fffffff"]))
                text = text[:m.start()] + new + text[m.end():]
                done.append(f"number {m.group(0)} -> {new}")
                continue
        text = "\n".join(lines)
    return text, done


# ---------------------------------------------------------------------------
# Cases


@dataclasses.dataclass
class Case:
    index: int
    tool: str
    what: str                      # one line: what this case does
    argv: list[str]                # {in}, {out}, {vmfb:NAME} are filled in at run time
    files: dict = dataclasses.field(default_factory=dict)  # name under {in} -> bytes
    output: Optional[str] = None   # the output (under {out}) a success must leave
    expect_ok: Optional[bool] = None  # None: either way

    def command(self, indir: str, outdir: str, vmfbs: dict) -> list[str]:
        def fill(a: str) -> str:
            a = a.replace("{in}", indir).replace("{out}", outdir)
            for name, path in vmfbs.items():
                a = a.replace("{vmfb:" + name + "}", path)
            return a

        return [tool(self.tool)] + [fill(a) for a in self.argv]


DEVICE_SPECS = ["local[0]", "local[1]", "local[2]", "cuda[0]", "hip[0]", "vulkan[0]", "local[-1]", "local[99999999999]",
                "cuda[x]", "gpu[0]", "local", "", "local[0]extra", "local[0", "LOCAL[0]", "metal[0]"]
RUNTIME_DEVICES = ["local-task", "local-sync", "cuda", "hip", "vulkan", "nope", "local-task://", "local-sync://0",
                   "cuda://99", "", "local_task", "--", "local-task --device=local-sync"]

# Real modules mdc-run is given (built once per run by `prepare`).
VMFB_SOURCES = {
    # name: (source relative to ROOT, devices, extra flags, function, good inputs)
    "example": ("examples/multi_device_mul.mlir", ["a=local[0]", "b=local[1]"], ["--link=a:b=staged"],
                "multi_device_mul", ["--input=4xf32=10,11,12,13"]),
    "two_args": ("test/e2e/programs/two_args.mlir", ["a=local[0]", "b=local[1]"], ["--link=a:b=staged"],
                 "add_across", ["--input=2x3xf32=1", "--input=2x3xf32=2"]),
    "dynamic": ("test/e2e/programs/dynamic_2d.mlir", ["a=local[0]", "b=local[1]"],
                ["--link=a:b=staged", "--iree-execution-model=async-external"], "dynamic_2d",
                ["--input=2x3xf16=1"]),
    "three": ("test/e2e/programs/three_devices.mlir", ["a=local[0]", "b=local[1]", "c=local[2]"],
              ["--link=a:b=staged", "--link=c:b=staged"], "three_devices", ["--input=4x4xi32=3"]),
    "loop": ("test/e2e/programs/loop.mlir", ["a=local[0]", "b=local[1]"], ["--link=a:b=staged"], "ping_pong",
             ["--input=5xf32=1", "--input=2"]),
    # device_b on Vulkan (lavapipe in CI): mdc-run runs these in iree-run-module
    # through their host entry points (runtime_shim/native.py).
    "example_vk": ("examples/multi_device_mul.mlir", ["a=local[0]", "b=vulkan[0]"], [], "multi_device_mul",
                   ["--input=4xf32=10,11,12,13"]),
    "two_args_vk": ("test/e2e/programs/two_args.mlir", ["a=local[0]", "b=vulkan[0]"], [], "add_across",
                    ["--input=2x3xf32=1", "--input=2x3xf32=2"]),
    "dynamic_vk": ("test/e2e/programs/dynamic_2d.mlir", ["a=local[0]", "b=vulkan[0]"],
                   ["--iree-execution-model=async-external"], "dynamic_2d", ["--input=2x3xf16=1"]),
}


def runtime_devices(devs: list[str]) -> list[str]:
    """The runtime devices for a module's --device specs: CPUs take
    local-task and local-sync in turn, a Vulkan device takes vulkan."""
    cpus = iter(["local-task", "local-sync", "local-task"])
    return ["vulkan" if spec.split("=", 1)[1].startswith("vulkan") else next(cpus) for spec in devs]


def _device_flags(text: str, rng) -> list[str]:
    names = sorted(set(re.findall(r"@(device_\w+)", text))) or ["device_a"]
    flags = []
    for i, n in enumerate(names):
        spec = f"local[{i}]" if rng.random() < 0.75 else str(rng.choice(["cuda[0]", "hip[0]", f"local[{i}]"]))
        short = n[len("device_"):] if rng.random() < 0.5 else n
        flags.append(f"--device={short}={spec}")
    return flags


def _bad_device_flags(text: str, rng) -> tuple[list[str], str]:
    flags = _device_flags(text, rng)
    kind = str(rng.choice(["missing", "duplicate", "bad_spec", "unknown_name", "none", "noequals", "empty_name",
                           "swap_kinds", "many"]))
    if kind == "missing" and flags:
        del flags[int(rng.integers(len(flags)))]
    elif kind == "duplicate" and flags:
        flags.append(flags[0])
    elif kind == "bad_spec" and flags:
        k = int(rng.integers(len(flags)))
        flags[k] = flags[k].rsplit("=", 1)[0] + "=" + str(rng.choice(DEVICE_SPECS))
    elif kind == "unknown_name":
        flags.append(f"--device=zz=local[{len(flags)}]")
    elif kind == "none":
        flags = []
    elif kind == "noequals":
        flags.append("--device=a")
    elif kind == "empty_name":
        flags.append("--device==local[0]")
    elif kind == "swap_kinds":
        flags = [f.replace("local", "cuda") for f in flags]
    elif kind == "many":
        flags += [f"--device=x{i}=local[{i}]" for i in range(20)]
    return flags, kind


def _link_flags(text: str, rng) -> list[str]:
    names = sorted(set(re.findall(r"@device_(\w+)", text))) or ["a", "b"]
    out = []
    for _ in range(int(rng.integers(0, 4))):
        x, y = str(rng.choice(names + ["z", "a", ""])), str(rng.choice(names + ["b", "a"]))
        mode = str(rng.choice(["staged", "shared", "staged", "bogus", ""]))
        form = str(rng.choice(["{x}:{y}={m}", "{x}-{y}", "{x}:{y}", "{x}:{y}={m}=extra", "{x}:{x}={m}", ":={m}"]))
        out.append("--link=" + form.format(x=x, y=y, m=mode))
    return out


def _compile_tail(rng, binary: bool = True) -> tuple[list[str], Optional[str]]:
    """-o / --compile-to / execution model flags, and the expected output."""
    flags = []
    if rng.random() < 0.3:
        flags.append("--iree-execution-model=async-external")
    if rng.random() < 0.25:
        stage = str(rng.choice(["flow", "stream-tensor", "mdc", "stream", "hal", "vm", "bogus"]))
        flags += [f"--compile-to={stage}", "-o", "{out}/o.mlir"]
        return flags, "o.mlir"
    flags += ["-o", "{out}/o.vmfb"]
    return flags, "o.vmfb"


def make_case(seed: int, index: int, compile_inputs: list[str], opt_inputs: list[str]) -> Case:
    rng = np.random.default_rng([seed, index])
    kind = str(rng.choice(["compile_mutant", "compile_flags", "opt_mutant", "run", "garbage", "absurd"],
                          p=[0.30, 0.14, 0.20, 0.24, 0.06, 0.06]))
    if kind == "compile_mutant":
        src = str(rng.choice(compile_inputs))
        text, done = mutate(open(src, encoding="utf-8", errors="replace").read(), rng, int(rng.integers(1, 4)))
        tail, output = _compile_tail(rng)
        argv = ["{in}/input.mlir", *_device_flags(text, rng)]
        if rng.random() < 0.4:
            argv += _link_flags(text, rng)
        return Case(index, "mdc-compile", f"{os.path.relpath(src, ROOT)}: {'; '.join(done)}", argv + tail,
                    {"input.mlir": text.encode("utf-8", "surrogateescape")}, output)
    if kind == "compile_flags":
        src = str(rng.choice(compile_inputs))
        text = open(src, encoding="utf-8", errors="replace").read()
        flags, what = _bad_device_flags(text, rng)
        links = _link_flags(text, rng) if rng.random() < 0.6 else []
        tail, output = _compile_tail(rng)
        extra = []
        r = rng.random()
        if r < 0.08:
            tail = ["-o", "{out}/no/such/dir/o.vmfb"]
            output = None
            what += ", -o into a missing directory"
        elif r < 0.14:
            tail = ["-o", "{out}"]
            output = None
            what += ", -o names a directory"
        elif r < 0.18:
            tail = []
            output = None
            what += ", no -o"
        elif r < 0.22:
            tail = ["-o", "-"]
            output = None
            what += ", -o - without --compile-to"
        elif r < 0.28:
            extra = [str(rng.choice(["--bogus", "--iree-no-such-flag=1", "--iree-hal-target-device=device_a=local[0]",
                                     "--verbose", "--dump-stages={out}/stages", "--print-iree-flags",
                                     "--iree-llvmcpu-target-cpu=nonsense", "--dump-stages={in}/input.mlir",
                                     "--no-manifest", "--iree-cuda-target=sm_90"]))]
            what += f", {extra[0]}"
            # --dump-stages={out}/stages: the output is still expected; the
            # rule leaves the stages/ files to themselves.
            if extra[0] == "--print-iree-flags":
                output = None  # prints the flags and writes nothing
        inp = "{in}/input.mlir"
        if rng.random() < 0.05:
            inp, what = "{in}/missing.mlir", what + ", missing input"
        elif rng.random() < 0.05:
            inp, what = "{in}", what + ", input is a directory"
        return Case(index, "mdc-compile", f"{os.path.relpath(src, ROOT)} with {what} {' '.join(links)}",
                    [inp, *flags, *links, *extra, *tail], {"input.mlir": text.encode()}, output)
    if kind == "opt_mutant":
        src = str(rng.choice(opt_inputs))
        text = open(src, encoding="utf-8", errors="replace").read()
        done = []
        if rng.random() < 0.85:
            text, done = mutate(text, rng, int(rng.integers(1, 4)))
        passes = str(rng.choice(["transfer-insertion", "host-fences", "transfer-insertion,host-fences",
                                 "no-such-pass", "", ",", "transfer-insertion,,"]))
        argv = ["{in}/input.mlir", f"--pass={passes}"]
        if rng.random() < 0.4:
            argv += _link_flags(text, rng)
        if rng.random() < 0.3:
            argv.append("--split-input-file")
        output = None
        if rng.random() < 0.5:
            argv += ["-o", "{out}/o.mlir"]
            output = "o.mlir"
        if rng.random() < 0.05:
            argv = ["--list-passes"] + (["{in}/input.mlir"] if rng.random() < 0.5 else [])
            output = None
        return Case(index, "mdc-opt", f"{os.path.relpath(src, ROOT)}: {'; '.join(done) or 'unchanged'}, --pass={passes}",
                    argv, {"input.mlir": text.encode("utf-8", "surrogateescape")}, output)
    if kind == "run":
        name = str(rng.choice(sorted(VMFB_SOURCES)))
        _, devs, _, fn, inputs = VMFB_SOURCES[name]
        what = [name]
        files = {}
        module = "{vmfb:" + name + "}"
        r = rng.random()
        if r < 0.12:
            module = "{in}/trunc.vmfb"
            files["@trunc"] = (name, float(rng.random()))  # filled from the real vmfb by `materialize`
            what.append("truncated vmfb")
        elif r < 0.22:
            module = "{in}/flipped.vmfb"
            files["@flip"] = (name, int(rng.integers(1 << 30)), int(rng.integers(1, 6)))
            what.append("bit-flipped vmfb")
        elif r < 0.25:
            module = "{in}/missing.vmfb"
            what.append("missing vmfb")
        elif r < 0.28:
            module = "{in}"
            what.append("vmfb is a directory")
        n = len(devs)
        dev_flags = runtime_devices(devs)
        r = rng.random()
        if r < 0.15:
            dev_flags = dev_flags[: int(rng.integers(0, n))]
            what.append(f"{len(dev_flags)} runtime devices for {n}")
        elif r < 0.25:
            dev_flags = dev_flags + ["local-task"] * int(rng.integers(1, 3))
            what.append("extra runtime devices")
        elif r < 0.4:
            k = int(rng.integers(max(len(dev_flags), 1)))
            bad = str(rng.choice(RUNTIME_DEVICES))
            dev_flags = dev_flags[:k] + [bad] + dev_flags[k + 1:]
            what.append(f"runtime device {bad!r}")
        argv = [f"--module={module}", *[f"--device={d}" for d in dev_flags]]
        r = rng.random()
        if r < 0.1:
            argv.append(f"--function={rng.choice(['nope', '__init', '', fn + 'x'])}")
            what.append("wrong --function")
        elif r < 0.9:
            argv.append(f"--function={fn}")
        ins = list(inputs)
        r = rng.random()
        if r < 0.1:
            ins = ins[:-1]
            what.append("an input missing")
        elif r < 0.18:
            ins = ins + ["--input=1"]
            what.append("an extra input")
        elif r < 0.45:
            k = int(rng.integers(len(ins)))
            bad = str(rng.choice(["4xf32=1,2,3", "99999999999x99999999999xf32=1", "-1x4xf32=1", "0x4xf32=",
                                  "4xf64=1", "4xq9=1", "4xf32=[1 2][3 4", "4xf32=a,b,c,d", "f32=1", "@{in}/nope.npy",
                                  "@{in}/garbage.npy", "@{in}/pickle.npy", "2x3xi1=1", "", "1e999", "4xf32=nan,inf,-inf,1",
                                  "2x3xf32=1,2,3,4,5,6,7", "16x8xf32=1", "4x4xi32=" + ",".join(["99999999999"] * 16)]))
            ins[k] = "--input=" + bad
            files["garbage.npy"] = bytes(rng.integers(0, 256, 200, dtype=np.uint8))
            files["pickle.npy"] = b"\x93NUMPY\x01\x00v\x00{'descr': '|O', 'fortran_order': False, 'shape': (2,), }" + b" " * 50 + b"\n" + b"\x80\x04N." * 4
            what.append(f"input {bad!r}")
        argv += ins
        output = None
        r = rng.random()
        if r < 0.3:
            argv.append("--output=@{out}/r.npy")
            output = "r.npy"
        elif r < 0.4:
            bad = str(rng.choice(["@{out}/no/dir/r.npy", "bogus", "@", "@{out}", "-", ""]))
            argv.append(f"--output={bad}")
            what.append(f"--output={bad}")
        if rng.random() < 0.08:
            bad = str(rng.choice(["--benchmark=-1", "--benchmark=x", "--benchmark=2", "--task_topology_group_count=0",
                                  "--task_topology_group_count=-3", "--output_max_element_count=-1", "--list_functions",
                                  "--bogus", "--modul=x", "--input"]))
            argv.append(bad)
            what.append(bad)
            if bad == "--list_functions":
                output = None  # lists the functions and runs nothing
        return Case(index, "mdc-run", ", ".join(what), argv, files, output)
    if kind == "garbage":
        t = str(rng.choice(TOOLS))
        r = rng.random()
        if r < 0.4:
            data = bytes(rng.integers(0, 256, int(rng.integers(0, 4000)), dtype=np.uint8))
            what = f"{len(data)} random bytes"
        elif r < 0.55:
            data = b""
            what = "an empty file"
        elif r < 0.7:
            data = ("\n" * int(rng.integers(1, 100000))).encode()
            what = "only newlines"
        elif r < 0.85:
            data = ("func.func @f() {" * int(rng.integers(100, 3000))).encode()
            what = "deeply nested opens"
        else:
            data = "é∂ƒ\u202e\x00".encode() * 100
            what = "unicode and NULs"
        if t == "mdc-run":
            return Case(index, t, f"vmfb of {what}", ["--module={in}/input.vmfb", "--device=local-task"],
                        {"input.vmfb": data})
        if t == "mdc-opt":
            return Case(index, t, f"input of {what}", ["{in}/input.mlir", "--pass=transfer-insertion"],
                        {"input.mlir": data})
        return Case(index, t, f"input of {what}", ["{in}/input.mlir", "--device=a=local[0]", "--device=b=local[1]",
                                                   "-o", "{out}/o.vmfb"], {"input.mlir": data}, "o.vmfb")
    # absurd shapes in an otherwise valid program
    dim = str(rng.choice(["99999999999", "0", "9223372036854775807", "4294967296", "1"]))
    rank = int(rng.integers(1, 4))
    shape = "x".join([dim] + ["4"] * (rank - 1))
    dtype = str(rng.choice(["f32", "i8", "f16", "i1", "i64", "complex<f32>", "f8E4M3FN", "index"]))
    text = f"""func.func public @f(%x: tensor<{shape}x{dtype}> {{iree.abi.affinity = #hal.device.promise<@device_a>}})
    -> (tensor<{shape}x{dtype}> {{iree.abi.affinity = #hal.device.promise<@device_a>}}) {{
  %b = flow.tensor.transfer %x : tensor<{shape}x{dtype}> to #hal.device.promise<@device_b>
  %back = flow.tensor.transfer %b : tensor<{shape}x{dtype}> to #hal.device.promise<@device_a>
  return %back : tensor<{shape}x{dtype}>
}}
"""
    tail, output = _compile_tail(rng)
    return Case(index, "mdc-compile", f"transfer of tensor<{shape}x{dtype}>",
                ["{in}/input.mlir", "--device=a=local[0]", "--device=b=" + str(rng.choice(["local[1]", "cuda[0]"])),
                 "--link=a:b=staged", *tail], {"input.mlir": text.encode()}, output)


def make_cases(seed: int, count: int) -> list[Case]:
    compile_inputs, opt_inputs = corpus()
    return [make_case(seed, i, compile_inputs, opt_inputs) for i in range(count)]


# ---------------------------------------------------------------------------
# Running and checking


def prepare(work: str) -> dict:
    """Build the real modules mdc-run cases use. -> name: path."""
    os.makedirs(work, exist_ok=True)
    out = {}

    def build(name):
        src, devs, extra, _, _ = VMFB_SOURCES[name]
        path = os.path.join(work, f"{name}.vmfb")
        if not os.path.exists(path):
            r = subprocess.run([tool("mdc-compile"), os.path.join(ROOT, src), *[f"--device={d}" for d in devs],
                                *extra, "-o", path], capture_output=True, text=True, timeout=600)
            if r.returncode:
                raise RuntimeError(f"fuzz: cannot build {name}: {r.stderr}")
        return name, path

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for name, path in pool.map(build, sorted(VMFB_SOURCES)):
            out[name] = path
    return out


def materialize(case: Case, indir: str, vmfbs: dict) -> None:
    os.makedirs(indir, exist_ok=True)
    for name, data in case.files.items():
        if name == "@trunc":
            src, frac = data
            blob = open(vmfbs[src], "rb").read()
            with open(os.path.join(indir, "trunc.vmfb"), "wb") as f:
                f.write(blob[: int(len(blob) * frac)])
        elif name == "@flip":
            src, where, n = data
            blob = bytearray(open(vmfbs[src], "rb").read())
            rng = np.random.default_rng(where)
            for _ in range(n):
                k = int(rng.integers(len(blob)))
                blob[k] ^= 1 << int(rng.integers(8))
            with open(os.path.join(indir, "flipped.vmfb"), "wb") as f:
                f.write(bytes(blob))
        else:
            with open(os.path.join(indir, name), "wb") as f:
                f.write(data)


@dataclasses.dataclass
class Result:
    case: Case
    cmd: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    out_files: list[str]
    violations: list[str]

    @property
    def ok(self) -> bool:
        return not self.violations

    def report(self, seed: int) -> str:
        c = self.case
        lines = [f"MDC_FUZZ_SEED={seed} case {c.index} ({c.tool}): {c.what}",
                 f"reproduce: python test/e2e/fuzz.py show --seed {seed} --index {c.index}",
                 "violations: " + "; ".join(self.violations),
                 f"command: {' '.join(self.cmd)}",
                 f"exit status {self.returncode} after {self.seconds:.1f}s; output dir: {self.out_files}",
                 "--- stderr (first 40 lines) ---", *self.stderr.splitlines()[:40],
                 "--- stdout (first 10 lines) ---", *self.stdout.splitlines()[:10]]
        return "\n".join(lines)


_WARNING = re.compile(r"^(\S+: )?warning: |^\S+:\d+:\d+: warning: ")
_FIRST_LINE = re.compile(r"^(mdc-compile: error: |mdc-opt: error: |mdc-run: error: |\S.*?:\d+:\d+: error: )")
_INTERNAL = re.compile(r"^(mdc-compile|mdc-opt|mdc-run): internal error: ")


def check(case: Case, returncode: int, stdout: str, stderr: str, outdir: str) -> tuple[list[str], list[str]]:
    """The rule. -> (violations, files left in the output directory)."""
    v = []
    text = stdout + stderr
    if "Traceback (most recent call last)" in text:
        v.append("Python traceback")
    if returncode == -999:
        v.append(f"hang: no exit within {TIMEOUT:.0f}s")
    elif returncode < 0:
        v.append(f"killed by signal {-returncode}")
    left = []
    for base, _, files in os.walk(outdir):
        left += [os.path.relpath(os.path.join(base, f), outdir) for f in files]
    left.sort()
    if returncode == 0:
        expected = [case.output] if case.output else []
        extra = [f for f in left if f not in expected and not f.startswith("stages/")]
        if extra:
            v.append(f"unexpected files in the output directory: {extra}")
        for f in expected:
            if f not in left:
                v.append(f"exit 0 but no {f}")
            else:
                bad = _incomplete(os.path.join(outdir, f))
                if bad:
                    v.append(f"{f} is incomplete: {bad}")
                elif stat_mode_problem(os.path.join(outdir, f)):
                    v.append(stat_mode_problem(os.path.join(outdir, f)))
    elif returncode > 0:
        partial = [f for f in left if not f.startswith("stages/")]
        if partial:
            v.append(f"failed (exit {returncode}) but left {partial}")
        msg = [line for line in stderr.splitlines() if line.strip()]
        if not msg:
            msg = [line for line in stdout.splitlines() if line.strip()]
        first = next((line for line in msg if not _WARNING.match(line)), "")
        if not msg:
            v.append("failed with no message")
        elif _INTERNAL.match(first):
            v.append(f"internal error (a bug in mdc): {first[:200]!r}")
        elif not _FIRST_LINE.match(first):
            v.append(f"first line does not name the problem: {first[:200]!r}")
        if len(msg) > MAX_LINES or len(stderr) > MAX_CHARS:
            v.append(f"message too long: {len(msg)} lines, {len(stderr)} characters")
    return v, left


def stat_mode_problem(path: str) -> Optional[str]:
    """An output should get the mode any new file gets (0666 & ~umask).
    Checked only when MDC_FUZZ_CHECK_MODE=1: mdc-compile's outputs are 0600
    (test/lit/pending/output_file_mode.test)."""
    if os.environ.get("MDC_FUZZ_CHECK_MODE") != "1":
        return None
    umask = os.umask(0)
    os.umask(umask)
    mode = os.stat(path).st_mode & 0o777
    want = 0o666 & ~umask
    return None if mode == want else f"{os.path.basename(path)} has mode {mode:o}, not {want:o}"


def _incomplete(path: str) -> Optional[str]:
    if os.path.getsize(path) == 0:
        return "empty"
    if path.endswith(".vmfb"):
        try:
            import iree.runtime as rt

            rt.VmModule.mmap(rt.VmInstance(), path)
        except Exception as e:  # noqa: BLE001 - any load failure means a bad file
            return f"IREE cannot load it: {str(e)[:200]}"
    elif path.endswith(".npy"):
        try:
            np.load(path, allow_pickle=False)
        except Exception as e:  # noqa: BLE001
            return f"numpy cannot read it: {e}"
    elif path.endswith(".mlir"):
        with open(path, "rb") as f:
            data = f.read()
        if not data.rstrip().endswith(b"}"):
            return "IR does not end with a closing brace"
    return None


# Violations already reported, each with its pending lit test: test_fuzz.py
# marks them xfail instead of failing. Remove an entry when its test moves to
# test/lit/regress/.
# Violations already reported, each with its XFAIL test in test/lit/pending:
# (pending test, tool, regex on the stderr, regex on the case description).
# Empty: every violation found so far is fixed (test/lit/regress).
KNOWN: list = []


def known_issue(res: "Result") -> Optional[str]:
    for test, tool_name, err, what in KNOWN:
        if res.case.tool != tool_name:
            continue
        if err and not re.search(err, res.stderr):
            continue
        if what and not (re.search(what, res.case.what)
                         and any(v.startswith(("killed by signal", "hang")) for v in res.violations)):
            continue
        return test
    return None


# A runaway case fails alone instead of taking the machine down.
MEMORY_LIMIT_GB = float(os.environ.get("MDC_FUZZ_MEMORY_GB", "6"))


def run_case(case: Case, work: str, vmfbs: dict) -> Result:
    cdir = os.path.join(work, f"case{case.index:04d}")
    shutil.rmtree(cdir, ignore_errors=True)
    indir, outdir = os.path.join(cdir, "in"), os.path.join(cdir, "out")
    materialize(case, indir, vmfbs)
    os.makedirs(outdir)
    cmd = case.command(indir, outdir, vmfbs)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    start = time.time()
    # progen's runner: a timeout kills the whole process group (returncode
    # -999, a note appended to stderr), under the address-space limit.
    r = run_killing_group(limited(cmd, MEMORY_LIMIT_GB), TIMEOUT, text=False, cwd=cdir, env=env)
    rc, out, err = r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    seconds = time.time() - start
    violations, left = check(case, rc, out, err, outdir)
    return Result(case, cmd, rc, out, err, seconds, left, violations)


def run_all(cases: list[Case], work: str, jobs: int = 2, progress=None) -> list[Result]:
    vmfbs = prepare(os.path.join(work, "vmfb"))
    results = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futs = [pool.submit(run_case, c, work, vmfbs) for c in cases]
        for f in concurrent.futures.as_completed(futs):
            results.append(f.result())
            if progress:
                progress(results[-1])
    return sorted(results, key=lambda r: r.case.index)


def default_seed() -> int:
    env = os.environ.get("MDC_FUZZ_SEED")
    return int(env) if env else int(time.time()) % 1_000_000_007


# ---------------------------------------------------------------------------
# Minimising a violation: line-level, then character-level delta debugging of
# the case's input file.

def _ddmin(items: list, still_fails) -> list:
    n = 2
    while len(items) >= 2:
        chunk = max(len(items) // n, 1)
        reduced = False
        for start in range(0, len(items), chunk):
            candidate = items[:start] + items[start + chunk:]
            if candidate and still_fails(candidate):
                items, n, reduced = candidate, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(items):
                break
            n = min(n * 2, len(items))
    return items


def minimize(case: Case, work: str, vmfbs: dict, log=print, budget_s: float = 600) -> Case:
    """Shrink the case's input file while a violation of the same kind stays
    (at most `budget_s` seconds; the best so far is kept)."""
    deadline = time.time() + budget_s
    first = run_case(case, work, vmfbs)
    if first.ok:
        log("the case obeys the rule; nothing to minimise")
        return case
    kinds = {v.split(":")[0] for v in first.violations}
    name = next((n for n in case.files if n.startswith("input")), None)
    if name is None:
        log("no input file to minimise (the violation comes from the flags)")
        return case

    def fails(data: bytes) -> bool:
        if time.time() > deadline:
            return False
        c = dataclasses.replace(case, files={**case.files, name: data})
        r = run_case(c, work, vmfbs)
        return bool(kinds & {v.split(":")[0] for v in r.violations})

    data = case.files[name]
    lines = data.split(b"\n")
    lines = _ddmin(lines, lambda ls: fails(b"\n".join(ls)))
    data = b"\n".join(lines)
    if len(data) < 2000:
        chars = _ddmin([data[i:i + 1] for i in range(len(data))], lambda cs: fails(b"".join(cs)))
        data = b"".join(chars)
    log(f"minimised {name} to {len(data)} bytes")
    return dataclasses.replace(case, files={**case.files, name: data})


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int)
    r.add_argument("--count", type=int, default=500)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--keep")
    for name in ("show", "minimize"):
        s = sub.add_parser(name)
        s.add_argument("--seed", type=int, required=True)
        s.add_argument("--index", type=int, required=True)
        s.add_argument("--keep")
    a = p.parse_args(argv)
    work = a.keep or tempfile.mkdtemp(prefix="mdc-fuzz-")
    if a.cmd in ("show", "minimize"):
        compile_inputs, opt_inputs = corpus()
        case = make_case(a.seed, a.index, compile_inputs, opt_inputs)
        vmfbs = prepare(os.path.join(work, "vmfb"))
        if a.cmd == "minimize":
            case = minimize(case, os.path.join(work, "min"), vmfbs, log=lambda m: print(m, flush=True))
        res = run_case(case, os.path.join(work, "show"), vmfbs)
        print(f"case {case.index}: {case.tool}: {case.what}")
        print("command: " + " ".join(res.cmd))
        for name, data in case.files.items():
            if isinstance(data, bytes):
                print(f"--- {name} ({len(data)} bytes) ---")
                print(data.decode("utf-8", "replace")[:6000])
        print(res.report(a.seed) if not res.ok else f"obeys the rule (exit {res.returncode})\n{res.stderr[:2000]}")
        return 0 if res.ok else 1
    seed = a.seed if a.seed is not None else default_seed()
    print(f"MDC_FUZZ_SEED={seed}: {a.count} cases, work dir {work}", flush=True)
    start = time.time()
    cases = make_cases(seed, a.count)

    def progress(res: Result):
        if not res.ok:
            print(res.report(seed) + "\n", flush=True)

    results = run_all(cases, work, a.jobs, progress)
    bad = [x for x in results if not x.ok]
    by_tool = {}
    for x in results:
        by_tool.setdefault(x.case.tool, [0, 0])[x.returncode == 0] += 1
    print(f"MDC_FUZZ_SEED={seed}: {len(results) - len(bad)} obeyed the rule, {len(bad)} did not "
          f"({time.time() - start:.0f}s); exit status 0/non-0 per tool: "
          + ", ".join(f"{t} {s}/{f}" for t, (f, s) in sorted(by_tool.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
