"""A real ``transformers`` architecture for mdc, small and made here.

``gpt2()`` is a ``transformers.GPT2LMHeadModel`` with small dimensions
(CONFIG) and the random weights its own initialisation draws from torch's
generator, which ``models.build`` seeds first: nothing is downloaded. It is
wrapped so that the exported function takes only the token ids ``[B, S]``
(int64) and returns the logits ``[B, S, vocab]`` (float32) of one causal
forward pass, with no cache.

The causal mask is made here, as the 4D additive mask ``transformers``
takes as it is, rather than by ``transformers``' own mask code: that code,
traced by torch.export, gives ops IREE 3.13's torch input conversion does
not legalize (``torch.aten.diff`` from its packed-sequence check when no
2D mask is given; a ``torch.vtensor.literal`` of ``i1`` when one is).

Needs torch and transformers (the export environment, README.md).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

# The model's dimensions: 4 blocks of width 128, about 0.93M weights
# (3.7 MB in float32), so that the committed .irpa stays small.
CONFIG = dict(n_layer=4, n_embd=128, n_head=4, vocab_size=1024, n_positions=32)
BATCH, SEQUENCE = 2, 16  # the token ids' shape


class CausalLogits(nn.Module):
    """``model(ids)``: the logits of a transformers causal language model
    for token ids ``ids``, every position attending to itself and those
    before it."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids):
        n = ids.shape[1]
        mask = torch.full((n, n), torch.finfo(torch.float32).min).triu(1)[None, None]
        return self.model(input_ids=ids, attention_mask=mask, use_cache=False, return_dict=False)[0]


def gpt2() -> nn.Module:
    """GPT2LMHeadModel(GPT2Config(**CONFIG)) with eager attention (plain
    matmuls and a softmax), wrapped in CausalLogits."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(**CONFIG, bos_token_id=0, eos_token_id=0, use_cache=False,
                        attn_implementation="eager")
    return CausalLogits(GPT2LMHeadModel(config))


def gpt2_input_ids(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (rng.integers(0, CONFIG["vocab_size"], size=(BATCH, SEQUENCE), dtype=np.int64),)
