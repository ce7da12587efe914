"""The workload's model: a transformer-like stack of our own, its weights
(made from a seed, the same bits on every machine), its numpy reference and
its MLIR, placed block by block on a CPU and a GPU device.

    ids (B, i64) -> embedding lookup (V x H)
      -> N blocks: h = h + silu(linear(rmsnorm(h) * g_i, W_i))   (W_i: H x H)
      -> linear(rmsnorm(h) * g_out, head) -> logits (B x V, f32)

``dtype`` is every float's type in the program and the weights: f32 (the
default) or f16, what GPU inference runs in (the weights are made in f32 and
rounded to f16; the reference computes in float64 from the rounded ones).

``linear(x, W)`` is ``x @ W.T`` with W stored as torch.nn.Linear stores its
weight, out x in (layout "out_in", the default: head V x H); layout "in_out"
stores W in x out and computes ``x @ W`` (head H x V), as the first kits did.
IREE 3.13's CPU code for a batch-1 product is several times faster with the
out x in layout (docs/PERFORMANCE.md), so the layout is part of the kit.

The split ``k`` keeps the embedding and blocks 0..k-1 on the CPU device
(``@device_a``) and runs blocks k..N-1 and the head on the GPU device
(``@device_b``), as llama.cpp's ``--n-gpu-layers N-k`` offloads the last
N-k layers; with k = N the head stays on the CPU too, and nothing runs on
the GPU. Weights are function arguments, each declared on the device of
its block (``iree.abi.affinity``): the caller places them there once, and
a call moves only the activations (one crossing CPU->GPU at block k) and
the logits (back to the CPU). Needs numpy only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import re

import numpy as np

EPS = 1e-5  # rmsnorm's epsilon
# dtype -> (numpy type, check's tolerance). f32 arithmetic (TF32 included)
# keeps 1e-2, a wrong block or a lost crossing does not; f16 rounds every
# activation to 11 bits and IREE's f16 MMA code accumulates in f16.
DTYPES = {"f32": (np.float32, 1e-2), "f16": (np.float16, 5e-2)}
ALIGNMENT = 64  # what a CPU device needs to use an array in place
# A float type program() keeps f32 whatever the stack's dtype (rmsnorm's
# accumulation in f16 stacks); spelled so that the dtype's rewrite skips it.
KEEP32 = "F32KEEP"


class StackParts:
    """What every stack of the bench has alike (Stack here, swiglu.Stack,
    gpt2_mlp.Stack: frozen dataclasses with ``dtype``, ``seed``, ``vocab``
    and ``weights()``): the dtype checked, its numpy type and the check's
    tolerance, the weights' bytes and the token ids."""

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r}: expected {' or '.join(DTYPES)}")

    @property
    def numpy_dtype(self):
        return DTYPES[self.dtype][0]

    @property
    def tolerance(self) -> float:
        """The largest error (check) a right result has."""
        return DTYPES[self.dtype][1]

    @property
    def weight_bytes(self) -> int:
        size = np.dtype(self.numpy_dtype).itemsize
        return sum(size * math.prod(shape) for _, shape, _ in self.weights())

    def ids(self, batch: int) -> np.ndarray:
        """The token ids a run of ``batch`` tokens is checked with."""
        return token_ids(self.seed, self.vocab, batch)


@dataclasses.dataclass(frozen=True)
class Stack(StackParts):
    """The model's sizes: hidden size H, N blocks, vocabulary V, and the
    seed its weights and token ids are made from."""

    hidden: int = 2048
    blocks: int = 24
    vocab: int = 8192
    seed: int = 20261201
    layout: str = "out_in"  # or "in_out" (module docstring)
    dtype: str = "f32"  # or "f16" (module docstring)

    def __post_init__(self):
        if self.layout not in ("out_in", "in_out"):
            raise ValueError(f"layout {self.layout!r}: expected out_in or in_out")
        super().__post_init__()

    @property
    def out_in(self) -> bool:
        """Weights stored out x in, as torch.nn.Linear stores them."""
        return self.layout == "out_in"

    def weights(self) -> list[tuple[str, tuple[int, ...], int]]:
        """(name, shape, block) of every weight, in argument order; block
        -1 is the embedding, N the final norm and the head."""
        h, v = self.hidden, self.vocab
        out = [("embedding", (v, h), -1)]
        for i in range(self.blocks):
            out += [(f"norm{i}", (h,), i), (f"w{i}", (h, h), i)]
        head = (v, h) if self.out_in else (h, v)
        return out + [("norm_out", (h,), self.blocks), ("head", head, self.blocks)]

    def on_cpu(self, block: int, k: int) -> bool:
        """Whether ``block`` (-1: the embedding, N: the head) runs on the
        CPU device in split ``k``."""
        return block < k or (block == self.blocks and k == self.blocks)


# -- weights ---------------------------------------------------------------------


def token_ids(seed: int, vocab: int, batch: int) -> np.ndarray:
    """``batch`` token ids below ``vocab`` made from ``seed``."""
    return (_bits(seed, 1 << 20 | batch, batch) % np.uint64(vocab)).astype(np.int64)


def _bits(seed: int, salt: int, count: int, start: int = 0) -> np.ndarray:
    """``count`` 64-bit words of splitmix64 over (seed, salt, index): the
    same on every machine and numpy version, unlike numpy's generators."""
    x = np.arange(start, start + count, dtype=np.uint64)
    with np.errstate(over="ignore"):  # arithmetic modulo 2**64, as splitmix64 means it
        x += np.uint64((seed * 0x9E3779B97F4A7C15 + salt * 0xD1B54A32D192ED03) & (2**64 - 1))
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def aligned_empty(shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:
    """An uninitialised, writeable array whose data is 64-byte aligned."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def aligned_copy(array: np.ndarray) -> np.ndarray:
    """``array`` copied into 64-byte aligned memory."""
    out = aligned_empty(array.shape, array.dtype)
    out[...] = array
    return out


def _scale(stack, name: str, shape: tuple[int, ...]) -> tuple[float, float]:
    """(offset, half-width) of a weight's uniform values: unit-variance
    products for the matrices (over their input size: a matrix's last size
    out x in, its first in x out), gains near one, embeddings in [-1, 1)."""
    if name.startswith("norm"):
        return 1.0, 0.1
    if name == "embedding":
        return 0.0, 1.0
    return 0.0, math.sqrt(3.0 / (shape[-1] if stack.out_in else shape[0]))


def weight(stack, index: int, chunk: int = 1 << 22) -> np.ndarray:
    """Weight ``index`` of ``stack.weights()`` (a Stack's, or another
    model's with names of the same kinds: swiglu.py's), float32, 64-byte
    aligned: 24 random bits per value, scaled exactly (same bits
    everywhere)."""
    name, shape, _ = stack.weights()[index]
    offset, half = _scale(stack, name, shape)
    out = aligned_empty(shape).reshape(-1)
    for start in range(0, out.size, chunk):
        count = min(chunk, out.size - start)
        unit = (_bits(stack.seed, index, count, start) >> np.uint64(40)).astype(np.float32)
        unit *= np.float32(2.0 ** -23)
        unit -= np.float32(1.0)  # exactly [-1, 1) in steps of 2**-23
        out[start:start + count] = unit * np.float32(half) + np.float32(offset)
    return out.reshape(shape)


def weights(stack) -> list[np.ndarray]:
    """Every weight, in the stack's dtype (f16: each f32 weight rounded);
    made by a few threads at once (numpy leaves the lock while it works),
    the same bits as one after another."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
        made = list(pool.map(lambda i: weight(stack, i), range(len(stack.weights()))))
    if stack.dtype == "f32":
        return made
    return [aligned_copy(w.astype(stack.numpy_dtype)) for w in made]


def digest(arrays: list[np.ndarray]) -> str:
    """SHA-256 over the arrays' bytes: the run checks it made the weights
    the kit's reference was computed with."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).view(np.uint8).reshape(-1).data)
    return h.hexdigest()


# -- the reference ----------------------------------------------------------------


def _rmsnorm(h: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return h / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + EPS) * gain


def _linear(stack: Stack, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    w = w.astype(np.float64)
    return x @ (w.T if stack.out_in else w)


def reference(stack: Stack, params: list[np.ndarray], ids: np.ndarray) -> np.ndarray:
    """The logits for ``ids``, in float64 numpy."""
    h = params[0].astype(np.float64)[ids]
    for i in range(stack.blocks):
        u = _linear(stack, _rmsnorm(h, params[1 + 2 * i]), params[2 + 2 * i])
        h = h + u / (1.0 + np.exp(-u))
    return _linear(stack, _rmsnorm(h, params[-2]), params[-1])


def check(got: np.ndarray, want: np.ndarray, tolerance: float = DTYPES["f32"][1]) -> tuple[bool, float]:
    """(right, error): the largest difference from the reference relative
    to its largest magnitude; right below ``tolerance`` (the stack's,
    DTYPES)."""
    got = np.asarray(got)
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return False, float("inf")
    error = float(np.max(np.abs(got.astype(np.float64) - want)) / max(np.max(np.abs(want)), 1e-30))
    return error < tolerance, error


# -- the program --------------------------------------------------------------------

_CPU, _GPU = "#hal.device.promise<@device_a>", "#hal.device.promise<@device_b>"


def _maps(*maps: str) -> str:
    return "[" + ", ".join(f"affine_map<(d0, d1) -> ({m})>" for m in maps) + "]"


def _embedding(b: int, stack: Stack) -> list[str]:
    t = f"tensor<{b}x{stack.hidden}xf32>"
    return [
        f"  %h_e = tensor.empty() : {t}",
        f"  %h = linalg.generic {{indexing_maps = {_maps('d0', 'd0, d1')}, "
        f'iterator_types = ["parallel", "parallel"]}} ins(%ids : tensor<{b}xi64>) outs(%h_e : {t}) {{',
        "  ^bb0(%id: i64, %o: f32):",
        "    %row = arith.index_cast %id : i64 to index",
        "    %col = linalg.index 1 : index",
        f"    %v = tensor.extract %emb[%row, %col] : tensor<{stack.vocab}x{stack.hidden}xf32>",
        "    linalg.yield %v : f32",
        f"  }} -> {t}",
    ]


def _rmsnorm_ops(x: str, gain: str, out: str, b: int, hidden: int, dtype: str = "f32") -> list[str]:
    """``out`` = rmsnorm(``x``) * ``gain``, rows of ``hidden``. In f16 the
    sum of squares and the scaling are computed in f32 (``KEEP32``, which
    program() leaves f32), as f16 inference does (torch's reductions
    accumulate in f32): 2048 squares of activations above about 5.7 overflow
    f16's 65504, and the whole stack then returns zeros."""
    wide = dtype != "f32"
    acc = KEEP32 if wide else "f32"
    t, r = f"tensor<{b}x{hidden}xf32>", f"tensor<{b}x{acc}>"
    square = ([f"    %xw = arith.extf %x : f32 to {acc}", f"    %x2 = arith.mulf %xw, %xw : {acc}"] if wide else
              ["    %x2 = arith.mulf %x, %x : f32"])
    scale = ([f"    %xw = arith.extf %x : f32 to {acc}", f"    %gw = arith.extf %g : f32 to {acc}",
              f"    %y = arith.mulf %xw, %inv : {acc}", f"    %zw = arith.mulf %y, %gw : {acc}",
              f"    %z = arith.truncf %zw : {acc} to f32"] if wide else
             ["    %y = arith.mulf %x, %inv : f32", "    %z = arith.mulf %y, %g : f32"])
    return [
        f"  {out}_z = tensor.empty() : {r}",
        f"  {out}_0 = linalg.fill ins(%zero{'_acc' if wide else ''} : {acc}) outs({out}_z : {r}) -> {r}",
        f"  {out}_ss = linalg.generic {{indexing_maps = {_maps('d0, d1', 'd0')}, "
        f'iterator_types = ["parallel", "reduction"]}} ins({x} : {t}) outs({out}_0 : {r}) {{',
        f"  ^bb0(%x: f32, %acc: {acc}):",
        *square,
        f"    %s = arith.addf %acc, %x2 : {acc}",
        f"    linalg.yield %s : {acc}",
        f"  }} -> {r}",
        f"  {out}_e = tensor.empty() : {t}",
        f"  {out} = linalg.generic {{indexing_maps = {_maps('d0, d1', 'd0', 'd1', 'd0, d1')}, "
        f'iterator_types = ["parallel", "parallel"]}} ins({x}, {out}_ss, {gain} : {t}, {r}, tensor<{hidden}xf32>) '
        f"outs({out}_e : {t}) {{",
        f"  ^bb0(%x: f32, %ss: {acc}, %g: f32, %o: f32):",
        f"    %n = arith.constant {float(hidden):.6e} : {acc}",
        f"    %eps = arith.constant {EPS:.6e} : {acc}",
        f"    %mean = arith.divf %ss, %n : {acc}",
        f"    %var = arith.addf %mean, %eps : {acc}",
        f"    %inv = math.rsqrt %var : {acc}",
        *scale,
        "    linalg.yield %z : f32",
        f"  }} -> {t}",
    ]


def _matmul(x: str, w: str, out: str, b: int, inner: int, cols: int, out_in: bool) -> list[str]:
    """``out = linear(x, w)``: w is cols x inner (``out_in``) or inner x cols."""
    t = f"tensor<{b}x{cols}xf32>"
    if out_in:
        maps = "indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, " \
               "affine_map<(m, n, k) -> (m, n)>] "
        w_type = f"tensor<{cols}x{inner}xf32>"
    else:
        maps, w_type = "", f"tensor<{inner}x{cols}xf32>"
    return [
        f"  {out}_e = tensor.empty() : {t}",
        f"  {out}_0 = linalg.fill ins(%zero : f32) outs({out}_e : {t}) -> {t}",
        f"  {out} = linalg.matmul {maps}ins({x}, {w} : tensor<{b}x{inner}xf32>, {w_type}) "
        f"outs({out}_0 : {t}) -> {t}",
    ]


def _block(i: int, h: str, b: int, hidden: int, out_in: bool, dtype: str = "f32") -> list[str]:
    """h_{i+1} = h_i + silu(linear(rmsnorm(h_i) * g_i, W_i))."""
    t = f"tensor<{b}x{hidden}xf32>"
    return [
        *_rmsnorm_ops(h, f"%g{i}", f"%n{i}", b, hidden, dtype),
        *_matmul(f"%n{i}", f"%w{i}", f"%u{i}", b, hidden, hidden, out_in),
        f"  %r{i}_e = tensor.empty() : {t}",
        f"  %r{i} = linalg.generic {{indexing_maps = {_maps('d0, d1', 'd0, d1', 'd0, d1')}, "
        f'iterator_types = ["parallel", "parallel"]}} ins({h}, %u{i} : {t}, {t}) outs(%r{i}_e : {t}) {{',
        "  ^bb0(%x: f32, %u: f32, %o: f32):",
        "    %one = arith.constant 1.0 : f32",
        "    %neg = arith.negf %u : f32",
        "    %ex = math.exp %neg : f32",
        "    %den = arith.addf %one, %ex : f32",
        "    %silu = arith.divf %u, %den : f32",
        "    %sum = arith.addf %x, %silu : f32",
        "    linalg.yield %sum : f32",
        f"  }} -> {t}",
    ]


def _signature(stack: Stack, b: int, k: int | None) -> str:
    """The function's head; ``k`` None: no device annotations (stock IREE,
    one device)."""
    def attr(block: int | None) -> str:
        if k is None:
            return ""
        return f" {{iree.abi.affinity = {_CPU if block is None or stack.on_cpu(block, k) else _GPU}}}"

    args = [f"%ids: tensor<{b}xi64>{attr(None)}"]
    names = {"embedding": "emb", "norm_out": "gout", "head": "head"}
    for name, shape, block in stack.weights():
        arg = names.get(name, name.replace("norm", "g"))
        args.append(f"%{arg}: tensor<{'x'.join(map(str, shape))}xf32>{attr(block)}")
    result = f"tensor<{b}x{stack.vocab}xf32>{attr(None)}"
    return f"func.func public @forward_b{b}(\n    " + ",\n    ".join(args) + f"\n  ) -> ({result}) {{"


def program(stack: Stack, batches: tuple[int, ...], k: int | None) -> str:
    """The MLIR of one module: a function @forward_b<B> per batch size B.
    ``k``: blocks on the CPU device (see the module docstring); None: the
    same stack with no devices named, for stock IREE on one device. The
    text is made in f32; every float type becomes the stack's dtype."""
    lines = [f"// {stack.blocks} blocks, hidden {stack.hidden}, vocab {stack.vocab}; "
             + ("no devices named" if k is None else f"blocks 0..{k - 1} on the CPU, the rest on the GPU")]
    for b in batches:
        zero_acc = [f"  %zero_acc = arith.constant 0.0 : {KEEP32}"] if stack.dtype != "f32" else []
        lines += [_signature(stack, b, k), "  %zero = arith.constant 0.0 : f32", *zero_acc, *_embedding(b, stack)]
        h = "%h"
        for i in range(stack.blocks):
            if k is not None and i == k:
                lines.append(f"  %h_to_gpu = flow.tensor.transfer {h} : tensor<{b}x{stack.hidden}xf32> to {_GPU}")
                h = "%h_to_gpu"
            lines += _block(i, h, b, stack.hidden, stack.out_in, stack.dtype)
            h = f"%r{i}"
        lines += _rmsnorm_ops(h, "%gout", "%nf", b, stack.hidden, stack.dtype)
        lines += _matmul("%nf", "%head", "%logits", b, stack.hidden, stack.vocab, stack.out_in)
        out = "%logits"
        if k is not None and k < stack.blocks:
            lines.append(f"  %logits_cpu = flow.tensor.transfer %logits : tensor<{b}x{stack.vocab}xf32> to {_CPU}")
            out = "%logits_cpu"
        lines += [f"  return {out} : tensor<{b}x{stack.vocab}xf32>", "}", ""]
    return re.sub(r"f32(?![0-9A-Za-z_])", stack.dtype, "\n".join(lines)).replace(KEEP32, "f32")


# -- the placement variant ------------------------------------------------------------

PARAMETER_SCOPE = "model"  # the scope of the named parameters (mdc-run's --parameters=model=FILE.irpa)
_ARGUMENT_NAMES = {"embedding": "emb", "norm_out": "gout", "head": "head"}


def _argument_name(weight_name: str) -> str:
    return _ARGUMENT_NAMES.get(weight_name, weight_name.replace("norm", "g"))


def placement_program(stack: Stack, batch: int) -> str:
    """The same stack as ``program``'s, for ``--place``: one function
    @forward_b<batch> of the token ids alone, no device named anywhere, and
    every weight a ``util.global`` of a named parameter
    (``#flow.parameter.named<"model"::"NAME">``, NAME as in
    ``Stack.weights``) that the run supplies as a parameter archive."""
    return parameter_program(stack, batch, lambda i, h: _block(i, h, batch, stack.hidden, stack.out_in, stack.dtype))


def parameter_program(stack, batch: int, block) -> str:
    """A stack's program with its weights as named parameters (scope
    ``PARAMETER_SCOPE``, the names of ``stack.weights()``) and one function
    @forward_b<batch> of the token ids: the embedding lookup, then
    ``block(i, h)`` (the lines of block i, reading the activation ``h`` and
    leaving ``%r<i>``; each weight is the SSA value ``_argument_name``
    gives its name), then the final rmsnorm and the head."""
    lines = [f"// {stack.blocks} blocks, hidden {stack.hidden}, vocab {stack.vocab}; no devices named, "
             f"weights as parameters of scope {PARAMETER_SCOPE!r}"]
    for name, shape, _ in stack.weights():
        lines.append(f'util.global private @{name} = #flow.parameter.named<"{PARAMETER_SCOPE}"::"{name}"> : '
                     f"tensor<{'x'.join(map(str, shape))}xf32>")
    b = batch
    lines += [f"func.func public @forward_b{b}(%ids: tensor<{b}xi64>) -> tensor<{b}x{stack.vocab}xf32> {{",
              "  %zero = arith.constant 0.0 : f32"]
    if stack.dtype != "f32":
        lines.append(f"  %zero_acc = arith.constant 0.0 : {KEEP32}")
    for name, shape, _ in stack.weights():
        lines.append(f"  %{_argument_name(name)} = util.global.load @{name} : "
                     f"tensor<{'x'.join(map(str, shape))}xf32>")
    lines += _embedding(b, stack)
    h = "%h"
    for i in range(stack.blocks):
        lines += block(i, h)
        h = f"%r{i}"
    lines += _rmsnorm_ops(h, "%gout", "%nf", b, stack.hidden, stack.dtype)
    lines += _matmul("%nf", "%head", "%logits", b, stack.hidden, stack.vocab, stack.out_in)
    lines += [f"  return %logits : tensor<{b}x{stack.vocab}xf32>", "}", ""]
    return re.sub(r"f32(?![0-9A-Za-z_])", stack.dtype, "\n".join(lines)).replace(KEEP32, "f32")


class TorchEager:
    """A parameter stack (parameter_program's) in torch eager, every weight
    on ``device`` ("cuda", "cpu"), for swiglu.TorchSwiGLU and
    gpt2_mlp.TorchGPT2MLP: what their ``__call__`` shares."""

    def __init__(self, torch, stack, params, device: str):
        self.torch, self.stack, self.device = torch, stack, device
        self.w = [torch.from_numpy(w).to(device) for w in params]

    def _rmsnorm(self, h, gain):
        return h * self.torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * gain
