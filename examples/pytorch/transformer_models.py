"""Real ``transformers`` architectures for mdc, small and made here.

``gpt2()`` is a ``transformers.GPT2LMHeadModel`` and ``llama()`` a
``transformers.LlamaForCausalLM``, each with small dimensions (GPT2_CONFIG,
LLAMA_CONFIG) and the random weights its own initialisation draws from
torch's generator, which ``models.build`` seeds first: nothing is
downloaded. Each is wrapped so that the exported function takes only the
token ids ``[B, S]`` (int64) and returns the logits ``[B, S, vocab]``
(float32) of one causal forward pass, with no cache.

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

# The models' dimensions, small so that the committed .irpa files stay a
# few MB. GPT-2: 4 blocks of width 128, 0.93M weights (its tied embedding
# and head are saved under both names, 4.3 MB in all). Llama: 2 blocks of
# width 128, grouped-query attention (4 heads, 2 of keys and values),
# a gated MLP of 256, RMSNorm and rotary positions, 0.56M weights.
VOCAB = 1024
GPT2_CONFIG = dict(n_layer=4, n_embd=128, n_head=4, vocab_size=VOCAB, n_positions=32)
LLAMA_CONFIG = dict(num_hidden_layers=2, hidden_size=128, intermediate_size=256, num_attention_heads=4,
                    num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=32)
BATCH, SEQUENCE = 2, 16  # the token ids' shape
# A GPT-2 a GPU is faster for (export_wide.py, test/e2e/gpu_place_wide.py):
# 8 blocks of width 1024, a vocabulary of 8192, 417 MiB of weights, one call
# on 64 token ids. Its weights are not committed: the GPU run makes its own.
GPT2_WIDE_CONFIG = dict(n_layer=8, n_embd=1024, n_head=16, vocab_size=8192, n_positions=64)
WIDE_TOKENS = 64
# Token ids 0..VOCAB-1 and no cache; eager attention (plain matmuls and a softmax).
COMMON = dict(bos_token_id=0, eos_token_id=0, use_cache=False, attn_implementation="eager")


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
    """GPT2LMHeadModel(GPT2Config(**GPT2_CONFIG)), wrapped in CausalLogits."""
    from transformers import GPT2Config, GPT2LMHeadModel

    return CausalLogits(GPT2LMHeadModel(GPT2Config(**GPT2_CONFIG, **COMMON)))


def gpt2_wide() -> nn.Module:
    """GPT2LMHeadModel(GPT2Config(**GPT2_WIDE_CONFIG)), wrapped in CausalLogits."""
    from transformers import GPT2Config, GPT2LMHeadModel

    return CausalLogits(GPT2LMHeadModel(GPT2Config(**GPT2_WIDE_CONFIG, **COMMON)))


def llama() -> nn.Module:
    """LlamaForCausalLM(LlamaConfig(**LLAMA_CONFIG)), wrapped in CausalLogits."""
    from transformers import LlamaConfig, LlamaForCausalLM

    return CausalLogits(LlamaForCausalLM(LlamaConfig(**LLAMA_CONFIG, **COMMON)))


def token_ids(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The one argument: ``[BATCH, SEQUENCE]`` int64 token ids."""
    return (rng.integers(0, VOCAB, size=(BATCH, SEQUENCE), dtype=np.int64),)
