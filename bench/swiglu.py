"""A Llama-style SwiGLU stack of our own: its sizes, weights (made from a
seed by model.weight, the same bits on every machine), numpy reference,
MLIR and torch eager form. f32 (the default) or f16 (``dtype``, as
model.Stack's: the weights made in f32 and rounded, the norms' sums of
squares in f32), weights stored out x in as torch.nn.Linear stores them.

    ids (B, i64) -> embedding lookup (V x H)
      -> N blocks: n = rmsnorm(h) * g_i
                   h = h + down_i(silu(gate_i(n)) * up_i(n))
                   (gate_i, up_i: H -> F, weights F x H; down_i: F -> H, H x F)
      -> head(rmsnorm(h) * g_out) -> logits (B x V, f32)

The program holds every weight as a ``util.global`` of a named parameter
(``#flow.parameter.named<"model"::"NAME">``, NAME as in ``Stack.weights``),
as an exported model does: IREE's CPU data tiling packs each once, at
load, not on every call. Needs numpy only (torch for TorchSwiGLU).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import model


@dataclasses.dataclass(frozen=True)
class Stack(model.StackParts):
    """Hidden size H, feed-forward size F, N blocks, vocabulary V, and the
    seed of the weights and token ids. By default the sizes of a 1B Llama's
    feed-forward path (H 2048, F 5632), 8 blocks, a 32000-token vocabulary:
    1.6 GB of f32 weights."""

    hidden: int = 2048
    ffn: int = 5632
    blocks: int = 8
    vocab: int = 32000
    seed: int = 20261207
    dtype: str = "f32"  # or "f16" (model.DTYPES)
    # As model.Stack says it, for model.weight, model.weights and the program's pieces.
    out_in = True

    def weights(self) -> list[tuple[str, tuple[int, ...], int]]:
        """(name, shape, block) of every weight, in order; block -1 is the
        embedding, N the final norm and the head."""
        h, f = self.hidden, self.ffn
        out = [("embedding", (self.vocab, h), -1)]
        for i in range(self.blocks):
            out += [(f"norm{i}", (h,), i), (f"gate{i}", (f, h), i), (f"up{i}", (f, h), i), (f"down{i}", (h, f), i)]
        return out + [("norm_out", (h,), self.blocks), ("head", (self.vocab, h), self.blocks)]

    def describe(self) -> str:
        return (f"Llama-style SwiGLU stack: {self.blocks} blocks of rmsnorm, gate and up {self.hidden}x{self.ffn}, "
                f"silu(gate)*up, down {self.ffn}x{self.hidden}, residual; vocab {self.vocab}, {self.dtype}")


def reference(stack: Stack, params: list[np.ndarray], ids: np.ndarray) -> np.ndarray:
    """The logits for ``ids``, in float64 numpy."""
    def linear(x, w):
        return x @ w.astype(np.float64).T

    h = params[0].astype(np.float64)[ids]
    for i in range(stack.blocks):
        norm, gate, up, down = params[1 + 4 * i:5 + 4 * i]
        n = model._rmsnorm(h, norm)
        g = linear(n, gate)
        h = h + linear(g / (1.0 + np.exp(-g)) * linear(n, up), down)
    return linear(model._rmsnorm(h, params[-2]), params[-1])


def _block(stack: Stack, i: int, h: str, b: int) -> list[str]:
    """Block i's lines: reads ``h``, leaves ``%r<i>``."""
    hid, ffn = stack.hidden, stack.ffn
    t, tf = f"tensor<{b}x{hid}xf32>", f"tensor<{b}x{ffn}xf32>"
    maps = model._maps("d0, d1", "d0, d1", "d0, d1")
    return [
        *model._rmsnorm_ops(h, f"%g{i}", f"%n{i}", b, hid, stack.dtype),
        *model._matmul(f"%n{i}", f"%gate{i}", f"%ga{i}", b, hid, ffn, True),
        *model._matmul(f"%n{i}", f"%up{i}", f"%u{i}", b, hid, ffn, True),
        f"  %a{i}_e = tensor.empty() : {tf}",
        f"  %a{i} = linalg.generic {{indexing_maps = {maps}, "
        f'iterator_types = ["parallel", "parallel"]}} ins(%ga{i}, %u{i} : {tf}, {tf}) outs(%a{i}_e : {tf}) {{',
        "  ^bb0(%g: f32, %u: f32, %o: f32):",
        "    %one = arith.constant 1.0 : f32",
        "    %neg = arith.negf %g : f32",
        "    %ex = math.exp %neg : f32",
        "    %den = arith.addf %one, %ex : f32",
        "    %silu = arith.divf %g, %den : f32",
        "    %prod = arith.mulf %silu, %u : f32",
        "    linalg.yield %prod : f32",
        f"  }} -> {tf}",
        *model._matmul(f"%a{i}", f"%down{i}", f"%d{i}", b, ffn, hid, True),
        f"  %r{i}_e = tensor.empty() : {t}",
        f"  %r{i} = linalg.generic {{indexing_maps = {maps}, "
        f'iterator_types = ["parallel", "parallel"]}} ins({h}, %d{i} : {t}, {t}) outs(%r{i}_e : {t}) {{',
        "  ^bb0(%x: f32, %d: f32, %o: f32):",
        "    %sum = arith.addf %x, %d : f32",
        "    linalg.yield %sum : f32",
        f"  }} -> {t}",
    ]


def program(stack: Stack, batch: int) -> str:
    """The MLIR of one function @forward_b<batch> of the token ids, no
    device named, every weight a named parameter; every float in the
    stack's dtype (model.parameter_program rewrites the f32 it is made in)."""
    return model.parameter_program(stack, batch, lambda i, h: _block(stack, i, h, batch))


class TorchSwiGLU(model.TorchEager):
    """The same stack in torch eager, every weight on ``device`` ("cuda",
    "cpu"); a call moves the ids there and the logits back to numpy."""

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        torch, w = self.torch, self.w
        linear, silu = torch.nn.functional.linear, torch.nn.functional.silu
        with torch.inference_mode():
            h = w[0][torch.from_numpy(ids).to(self.device)]
            for i in range(self.stack.blocks):
                norm, gate, up, down = w[1 + 4 * i:5 + 4 * i]
                n = self._rmsnorm(h, norm)
                h = h + linear(silu(linear(n, gate)) * linear(n, up), down)
            return linear(self._rmsnorm(h, w[-2]), w[-1]).cpu().numpy()
