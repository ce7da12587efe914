"""Cases: a seeded command line for one tool, with its input files, made
from a mutated input and inconsistent device, link and run flags."""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Optional

import numpy as np

from ..paths import ROOT
from .mutations import corpus, mutate
from .tools import TOOLS, tool


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
