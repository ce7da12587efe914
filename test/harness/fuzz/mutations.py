"""The corpus (lit and e2e inputs) and its mutations: lines deleted,
duplicated or swapped, characters flipped, files truncated, garbage, absurd
shapes, unknown ops and attributes."""

from __future__ import annotations

import os
import re

import numpy as np

from ..paths import ROOT


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
