"""A GPT-2-style stack of our own, the third model of the placement bench:
GPT-2 small's feed-forward path (hidden 768, 4x expansion, 12 blocks, a
50257-token vocabulary), with GPT-2's LayerNorm, biases and tanh-GELU. It
differs from the workload and the SwiGLU stack where placement feels it:
the embedding table and the head are most of its bytes (294 of 510 MiB in
f32), its matrices are small (9 MiB each), and every block reads vectors
(gains, shifts, biases) beside its matrices.

    ids (B, i64) -> embedding lookup (V x H)
      -> N blocks: n = layernorm(h) * g_i + beta_i
                   h = h + proj_i(gelu(fc_i(n) + fcb_i)) + projb_i
                   (fc_i: H -> F, weight F x H; proj_i: F -> H, H x F)
      -> head(rmsnorm(h) * g_out) -> logits (B x V, f32)

Not GPT-2 itself: no attention (the work between the matmuls is the same
kind as the other stacks'), the head is its own weight (GPT-2 ties it to the
embedding) and normalized as the other stacks' heads are (an RMSNorm).
Weights are made from a seed by model.weight (the same bits on every
machine), held as named parameters, f32 or f16 (``dtype``; LayerNorm's sums
in f32, as model.py's RMSNorm keeps them), stored out x in. Needs numpy
only (torch for TorchGPT2MLP).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import model

GELU_C = math.sqrt(2.0 / math.pi)  # tanh-GELU, as GPT-2 computes it


@dataclasses.dataclass(frozen=True)
class Stack(model.StackParts):
    """Hidden size H, feed-forward size F, N blocks, vocabulary V, and the
    seed of the weights and token ids. By default GPT-2 small's sizes."""

    hidden: int = 768
    ffn: int = 3072
    blocks: int = 12
    vocab: int = 50257
    seed: int = 20261208
    dtype: str = "f32"  # or "f16" (model.DTYPES)
    # As model.Stack says it, for model.weight, model.weights and the program's pieces.
    out_in = True

    def weights(self) -> list[tuple[str, tuple[int, ...], int]]:
        """(name, shape, block) of every weight, in order; block -1 is the
        embedding, N the final norm and the head."""
        h, f = self.hidden, self.ffn
        out = [("embedding", (self.vocab, h), -1)]
        for i in range(self.blocks):
            out += [(f"norm{i}", (h,), i), (f"beta{i}", (h,), i), (f"fc{i}", (f, h), i), (f"fcb{i}", (f,), i),
                    (f"proj{i}", (h, f), i), (f"projb{i}", (h,), i)]
        return out + [("norm_out", (h,), self.blocks), ("head", (self.vocab, h), self.blocks)]

    def describe(self) -> str:
        return (f"GPT-2-style stack: {self.blocks} blocks of layernorm, fc {self.hidden}x{self.ffn} + bias, gelu, "
                f"proj {self.ffn}x{self.hidden} + bias, residual; vocab {self.vocab}, {self.dtype}")


def _layernorm(h: np.ndarray, gain: np.ndarray, shift: np.ndarray) -> np.ndarray:
    mean = h.mean(-1, keepdims=True)
    var = (h * h).mean(-1, keepdims=True) - mean * mean
    return (h - mean) / np.sqrt(var + model.EPS) * gain + shift


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x ** 3)))


def reference(stack: Stack, params: list[np.ndarray], ids: np.ndarray) -> np.ndarray:
    """The logits for ``ids``, in float64 numpy."""
    p = [w.astype(np.float64) for w in params]
    h = p[0][ids]
    for i in range(stack.blocks):
        gain, shift, fc, fcb, proj, projb = p[1 + 6 * i:7 + 6 * i]
        n = _layernorm(h, gain, shift)
        h = h + _gelu(n @ fc.T + fcb) @ proj.T + projb
    return model._rmsnorm(h, p[-2]) @ p[-1].T


def _layernorm_ops(i: int, h: str, b: int, hidden: int, dtype: str) -> list[str]:
    """``%n<i>`` = layernorm(``h``) * g_i + beta_i: one reduction with two
    results (the row's sum and sum of squares, f32 in an f16 stack), then
    one elementwise op (the unit that reads g_i, placement_plan.layout_of)."""
    wide = dtype != "f32"
    acc = model.KEEP32 if wide else "f32"
    t, r, v = f"tensor<{b}x{hidden}xf32>", f"tensor<{b}x{acc}>", f"tensor<{hidden}xf32>"
    x = ["    %xw = arith.extf %x : f32 to " + acc] if wide else []
    xw = "%xw" if wide else "%x"
    out = ([f"    %gw = arith.extf %g : f32 to {acc}", f"    %bw = arith.extf %be : f32 to {acc}",
            f"    %yg = arith.mulf %y, %gw : {acc}", f"    %zw = arith.addf %yg, %bw : {acc}",
            f"    %z = arith.truncf %zw : {acc} to f32"] if wide else
           ["    %yg = arith.mulf %y, %g : f32", "    %z = arith.addf %yg, %be : f32"])
    return [
        f"  %ln{i}_z = tensor.empty() : {r}",
        f"  %ln{i}_0 = linalg.fill ins(%zero{'_acc' if wide else ''} : {acc}) outs(%ln{i}_z : {r}) -> {r}",
        f"  %ln{i}:2 = linalg.generic {{indexing_maps = {model._maps('d0, d1', 'd0', 'd0')}, "
        f'iterator_types = ["parallel", "reduction"]}} ins({h} : {t}) outs(%ln{i}_0, %ln{i}_0 : {r}, {r}) {{',
        f"  ^bb0(%x: f32, %s: {acc}, %q: {acc}):",
        *x,
        f"    %x2 = arith.mulf {xw}, {xw} : {acc}",
        f"    %s1 = arith.addf %s, {xw} : {acc}",
        f"    %q1 = arith.addf %q, %x2 : {acc}",
        f"    linalg.yield %s1, %q1 : {acc}, {acc}",
        f"  }} -> ({r}, {r})",
        f"  %n{i}_e = tensor.empty() : {t}",
        f"  %n{i} = linalg.generic {{indexing_maps = {model._maps('d0, d1', 'd0', 'd0', 'd1', 'd1', 'd0, d1')}, "
        f'iterator_types = ["parallel", "parallel"]}} ins({h}, %ln{i}#0, %ln{i}#1, %g{i}, %beta{i} : '
        f"{t}, {r}, {r}, {v}, {v}) outs(%n{i}_e : {t}) {{",
        f"  ^bb0(%x: f32, %s: {acc}, %q: {acc}, %g: f32, %be: f32, %o: f32):",
        *x,
        f"    %n = arith.constant {float(hidden):.6e} : {acc}",
        f"    %eps = arith.constant {model.EPS:.6e} : {acc}",
        f"    %mean = arith.divf %s, %n : {acc}",
        f"    %sq = arith.divf %q, %n : {acc}",
        f"    %mm = arith.mulf %mean, %mean : {acc}",
        f"    %var = arith.subf %sq, %mm : {acc}",
        f"    %ve = arith.addf %var, %eps : {acc}",
        f"    %inv = math.rsqrt %ve : {acc}",
        f"    %c = arith.subf {xw}, %mean : {acc}",
        f"    %y = arith.mulf %c, %inv : {acc}",
        *out,
        "    linalg.yield %z : f32",
        f"  }} -> {t}",
    ]


def _bias_gelu(i: int, b: int, ffn: int) -> list[str]:
    tf, v = f"tensor<{b}x{ffn}xf32>", f"tensor<{ffn}xf32>"
    return [
        f"  %a{i}_e = tensor.empty() : {tf}",
        f"  %a{i} = linalg.generic {{indexing_maps = {model._maps('d0, d1', 'd1', 'd0, d1')}, "
        f'iterator_types = ["parallel", "parallel"]}} ins(%f{i}, %fcb{i} : {tf}, {v}) outs(%a{i}_e : {tf}) {{',
        "  ^bb0(%u: f32, %c: f32, %o: f32):",
        "    %x = arith.addf %u, %c : f32",
        f"    %k = arith.constant {GELU_C:.9e} : f32",
        "    %a = arith.constant 4.471500e-02 : f32",
        "    %half = arith.constant 5.000000e-01 : f32",
        "    %one = arith.constant 1.000000e+00 : f32",
        "    %x2 = arith.mulf %x, %x : f32",
        "    %x3 = arith.mulf %x2, %x : f32",
        "    %ax3 = arith.mulf %a, %x3 : f32",
        "    %in = arith.addf %x, %ax3 : f32",
        "    %kin = arith.mulf %k, %in : f32",
        "    %th = math.tanh %kin : f32",
        "    %tp = arith.addf %one, %th : f32",
        "    %hx = arith.mulf %half, %x : f32",
        "    %g = arith.mulf %hx, %tp : f32",
        "    linalg.yield %g : f32",
        f"  }} -> {tf}",
    ]


def _block(stack: Stack, i: int, h: str, b: int) -> list[str]:
    """Block i's lines: reads ``h``, leaves ``%r<i>``."""
    hid, ffn = stack.hidden, stack.ffn
    t, v = f"tensor<{b}x{hid}xf32>", f"tensor<{hid}xf32>"
    return [
        *_layernorm_ops(i, h, b, hid, stack.dtype),
        *model._matmul(f"%n{i}", f"%fc{i}", f"%f{i}", b, hid, ffn, True),
        *_bias_gelu(i, b, ffn),
        *model._matmul(f"%a{i}", f"%proj{i}", f"%d{i}", b, ffn, hid, True),
        f"  %r{i}_e = tensor.empty() : {t}",
        f"  %r{i} = linalg.generic {{indexing_maps = {model._maps('d0, d1', 'd0, d1', 'd1', 'd0, d1')}, "
        f'iterator_types = ["parallel", "parallel"]}} ins({h}, %d{i}, %projb{i} : {t}, {t}, {v}) '
        f"outs(%r{i}_e : {t}) {{",
        "  ^bb0(%x: f32, %d: f32, %c: f32, %o: f32):",
        "    %dc = arith.addf %d, %c : f32",
        "    %sum = arith.addf %x, %dc : f32",
        "    linalg.yield %sum : f32",
        f"  }} -> {t}",
    ]


def program(stack: Stack, batch: int) -> str:
    """As swiglu.program, of this stack's blocks."""
    return model.parameter_program(stack, batch, lambda i, h: _block(stack, i, h, batch))


class TorchGPT2MLP(model.TorchEager):
    """The same stack in torch eager, every weight on ``device`` ("cuda",
    "cpu"); a call moves the ids there and the logits back to numpy."""

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        torch, w = self.torch, self.w
        f = torch.nn.functional
        with torch.inference_mode():
            h = w[0][torch.from_numpy(ids).to(self.device)]
            for i in range(self.stack.blocks):
                gain, shift, fc, fcb, proj, projb = w[1 + 6 * i:7 + 6 * i]
                n = f.layer_norm(h, (self.stack.hidden,), gain, shift, model.EPS)
                h = h + f.linear(f.gelu(f.linear(n, fc, fcb), approximate="tanh"), proj, projb)
            return f.linear(self._rmsnorm(h, w[-2]), w[-1]).cpu().numpy()
