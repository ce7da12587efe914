"""Small PyTorch models for mdc: three split over two logical devices by
hand, and the same three plus a small GPT-2 with no placement at all.

Each model names two IREE logical devices: ``__device_0`` (meant to be the
CPU, ``--device=__device_0=local[0]``) and ``__device_1`` (meant to be the
GPU, ``--device=__device_1=cuda[0]``). A tensor moves between them with
``iree.turbine.ops.iree.transfer_to_logical_device("1", t)`` (the moniker
"1" names ``@__device_1``); an argument is placed on a device by
``aot.export(..., arg_device={index: DeviceAffinity(n)})``.

Every model is built by ``build(name)``, which seeds torch first, so its
weights are the same on every run. The weights are a few KB each: they are
inlined in the exported MLIR as dense resources.

``EXAMPLES`` holds, for each model, what export.py needs: the example
arguments (made with numpy from a fixed seed), the argument devices and the
dynamic shapes. ``UNPLACED`` holds the programs with no device named
anywhere (no ``transfer_to_logical_device``, no ``arg_device``), for
automatic placement to place: the three models built with ``placed=False``
(the same seeds, so the same weights, inputs and outputs), and ``gpt2`` and
``llama``, a ``transformers`` GPT2LMHeadModel and LlamaForCausalLM with
small dimensions and seeded random weights made here (no download),
exported with their weights as external parameters of scope ``model`` (an
.irpa file each) instead of inlined (transformer_models.py).

Needs torch and iree-turbine (the export environment, see README.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from torch import nn
from iree.turbine.aot import DeviceAffinity
from iree.turbine.ops.iree import transfer_to_logical_device

CPU = "0"  # moniker of @__device_0
GPU = "1"  # moniker of @__device_1


def to_device(moniker: str, t: torch.Tensor, placed: bool = True) -> torch.Tensor:
    """Moves ``t`` to logical device ``@__device_<moniker>`` (in eager
    torch, a copy); with ``placed=False``, ``t`` itself (the program names
    no device)."""
    return transfer_to_logical_device(moniker, t) if placed else t


class SplitMLP(nn.Module):
    """Three linear layers: the first (with its ReLU) on __device_0, the
    other two on __device_1. Input [4, 16] float32 on __device_0, output
    [4, 8] float32 computed on __device_1."""

    def __init__(self, placed: bool = True):
        super().__init__()
        self.placed = placed
        self.first = nn.Linear(16, 24)
        self.hidden = nn.Linear(24, 24)
        self.out = nn.Linear(24, 8)

    def forward(self, x):
        h = torch.relu(self.first(x))
        h = to_device(GPU, h, self.placed)
        h = torch.relu(self.hidden(h))
        return self.out(h)


class EmbedHead(nn.Module):
    """An embedding lookup of int64 token ids on __device_0, then a linear
    layer and a softmax over the classes on __device_1. Input [2, 5] int64
    on __device_0, output [2, 5, 10] float32 (rows sum to 1)."""

    def __init__(self, vocab: int = 32, width: int = 16, classes: int = 10, placed: bool = True):
        super().__init__()
        self.placed = placed
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, classes)

    def forward(self, ids):
        e = self.embed(ids)
        e = to_device(GPU, e, self.placed)
        return torch.softmax(self.head(e), dim=-1)


class DynamicBatch(nn.Module):
    """Two arguments with one dynamic batch dimension: ``x`` [B, 8] on
    __device_1 and ``y`` [B, 8] on __device_0. ``y`` goes through a linear
    layer and tanh on __device_0, moves to __device_1 and gates a linear
    layer of ``x`` there. Output [B, 8] float32."""

    def __init__(self, placed: bool = True):
        super().__init__()
        self.placed = placed
        self.gate = nn.Linear(8, 8)
        self.proj = nn.Linear(8, 8)

    def forward(self, x, y):
        g = torch.tanh(self.gate(y))
        g = to_device(GPU, g, self.placed)
        return self.proj(x) * g


@dataclass(frozen=True)
class Example:
    """How to export one model and what to feed it."""

    make: Callable[[], nn.Module]
    # The example arguments, from a numpy Generator seeded per model.
    inputs: Callable[[np.random.Generator], tuple[np.ndarray, ...]]
    # argument index -> logical device ordinal
    arg_device: dict[int, int]
    seed: int
    # builds torch.export dynamic_shapes (a Dim must be made in the export env)
    dynamic_shapes: Callable[[], dict] | None = field(default=None)
    # Other sizes of the dynamic dimension the exported program is checked
    # at: for each, inputs(rng, size) and torch's outputs are written too.
    other_sizes: tuple[int, ...] = ()
    # The scope of the weights when exported as external parameters (an
    # .irpa beside the MLIR, `--parameters=SCOPE=FILE`); None: inlined.
    parameter_scope: str | None = None


def _split_mlp_inputs(rng):
    return (rng.standard_normal((4, 16), dtype=np.float32),)


def _embed_head_inputs(rng):
    return (rng.integers(0, 32, size=(2, 5), dtype=np.int64),)


def _dynamic_batch_inputs(rng, batch: int = 3):
    # A batch of 3: the export's example shape; any B >= 1 runs.
    return (rng.standard_normal((batch, 8), dtype=np.float32),
            rng.standard_normal((batch, 8), dtype=np.float32))


def _dynamic_batch_shapes():
    batch = torch.export.Dim("batch", min=1, max=4096)
    return {"x": {0: batch}, "y": {0: batch}}


EXAMPLES: dict[str, Example] = {
    "split_mlp": Example(SplitMLP, _split_mlp_inputs, {0: 0}, seed=1),
    "embed_head": Example(EmbedHead, _embed_head_inputs, {0: 0}, seed=2),
    "dynamic_batch": Example(DynamicBatch, _dynamic_batch_inputs, {0: 1, 1: 0}, seed=3,
                             dynamic_shapes=_dynamic_batch_shapes, other_sizes=(1, 7, 64)),
}


def _transformer(name: str) -> Callable[[], nn.Module]:
    def make():
        import transformer_models  # needs transformers, only for these models

        return getattr(transformer_models, name)()

    return make


def _token_ids(rng):
    import transformer_models

    return transformer_models.token_ids(rng)


# The same models with no device named, and a transformers GPT-2, for
# automatic placement. The seeds are EXAMPLES', so the three small models
# have the same weights and inputs, and torch gives the same outputs.
UNPLACED: dict[str, Example] = {
    "split_mlp": Example(lambda: SplitMLP(placed=False), _split_mlp_inputs, {}, seed=1),
    "embed_head": Example(lambda: EmbedHead(placed=False), _embed_head_inputs, {}, seed=2),
    "dynamic_batch": Example(lambda: DynamicBatch(placed=False), _dynamic_batch_inputs, {}, seed=3,
                             dynamic_shapes=_dynamic_batch_shapes, other_sizes=(1, 7, 64)),
    "gpt2": Example(_transformer("gpt2"), _token_ids, {}, seed=4, parameter_scope="model"),
    "llama": Example(_transformer("llama"), _token_ids, {}, seed=5, parameter_scope="model"),
}


def build(name: str, table: dict[str, Example] = EXAMPLES) -> nn.Module:
    """The model ``name`` of ``table`` with its seeded weights, in eval mode."""
    torch.manual_seed(table[name].seed)
    return table[name].make().eval()


def arg_device(name: str, table: dict[str, Example] = EXAMPLES) -> dict[int, DeviceAffinity]:
    return {i: DeviceAffinity(d) for i, d in table[name].arg_device.items()}


def example_inputs(name: str, table: dict[str, Example] = EXAMPLES) -> tuple[np.ndarray, ...]:
    return table[name].inputs(np.random.default_rng(table[name].seed))


def sized_inputs(name: str, size: int, table: dict[str, Example] = EXAMPLES) -> tuple[np.ndarray, ...]:
    """The arguments at another size of the dynamic dimension (one of
    ``other_sizes``), from a generator seeded by the model and the size."""
    return table[name].inputs(np.random.default_rng([table[name].seed, size]), size)
