"""A ``transformers`` LlamaForCausalLM with a KV cache kept in the program:
two entry points for generation, exported with iree-turbine.

``prefill(ids, length)``: ``ids`` is ``[1, PROMPT_TOKENS]`` int64, the
prompt padded at its end, ``length`` ``[1]`` int64 its length; it writes the
keys and values of positions 0..PROMPT_TOKENS-1 into the cache and returns
the f32 logits ``[1, vocab]`` of position ``length - 1``.
``decode(token, position)``: ``token`` ``[1, 1]`` int64, ``position`` ``[1]``
int64; it writes the token's keys and values at ``position`` and returns
the logits ``[1, vocab]`` of that position. The padding's keys and values
are never read: a position attends to those at or before it, and decode
writes position ``p`` before anything attends to it.

The cache is one K and one V buffer per block, ``[1, kv_heads,
MAX_CONTEXT, head_dim]``, written in place: prefill assigns the slice of
positions 0..PROMPT_TOKENS-1, decode ``index_copy_``s the row at
``position``. torch.export makes each write a ``slice_scatter`` or an
``index_put`` of the buffer and its mutation a result, iree-turbine a
store to a mutable ``util.global`` shared by both functions
(``@__auto.cache.k0``, ``@__auto.cache.v0``, ...: named by ``export``,
given zeros by ``zero_caches``), and IREE an update of the slice (a
copy into, or an ``iree_linalg_ext.scatter`` into, the loaded global,
stored back; mdc's ``state-initial-values`` keeps the zeroed caches
apart, which stock IREE 3.13 gives one buffer: docs/DESIGN.md section 8).
The weights are the model's parameters, external (scope ``model``) under
``transformers``' names.

The math is the model's: the wrapper calls its embedding, rotary
embedding, decoder layers (each its own RMSNorms, q/k/v/o projections,
``apply_rotary_pos_emb``, eager attention and MLP), final norm and head;
only the cache (``KVCache.update``, the hook ``LlamaAttention`` calls) and
the additive masks are the wrapper's own (``transformers``' mask code does
not legalize in IREE 3.13: transformer_models.py).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

import llama_weights as lw

TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16}
CACHE_SCOPE = "kv_cache"  # a marker only: zero_caches gives these globals zeros


class KVCache:
    """What ``LlamaAttention`` calls as its cache: ``update(k, v, layer)``
    writes the new keys and values into the cache, in place, and returns
    those to attend to.

    Prefill writes positions 0..n-1 (a slice assignment) and attends to
    its own keys and values; decode writes one position (``index_copy_``
    at ``position``) and attends to the whole cache, the positions after
    it masked. (Stock IREE 3.13 gives zero-initialised mutable globals
    updated in place one buffer between them; mdc's pass
    ``state-initial-values`` steps around that: docs/DESIGN.md section 8.)"""

    def __init__(self, owner: "LlamaGenerate", position=None):
        self.owner, self.position = owner, position  # position None: prefill

    def update(self, k, v, layer_idx, *args, **kwargs):
        kc, vc = self.owner.cache(layer_idx)
        if self.position is None:  # prefill: positions 0..n-1, attend among themselves
            n = k.shape[2]
            kc[:, :, :n] = k
            vc[:, :, :n] = v
            return k, v
        kc.index_copy_(2, self.position, k)  # decode: the row at ``position``
        vc.index_copy_(2, self.position, v)
        return kc, vc


class LlamaGenerate(nn.Module):
    """``prefill`` and ``decode`` of ``lm`` (a LlamaForCausalLM) over a KV
    cache of MAX_CONTEXT positions held as buffers."""

    def __init__(self, lm: nn.Module):
        super().__init__()
        self.model, self.lm_head = lm.model, lm.lm_head  # transformers' names for the weights
        c = lm.config
        self.layers = c.num_hidden_layers
        shape = (1, c.num_key_value_heads, lw.MAX_CONTEXT, c.hidden_size // c.num_attention_heads)
        dtype = lm.lm_head.weight.dtype
        for i in range(self.layers):
            for kind in "kv":
                self.register_buffer(f"{kind}{i}", torch.zeros(shape, dtype=dtype), persistent=False)

    def cache(self, i: int):
        return getattr(self, f"k{i}"), getattr(self, f"v{i}")

    def _run(self, ids, positions, mask, cache: KVCache):
        h = self.model.embed_tokens(ids)
        pe = self.model.rotary_emb(h, position_ids=positions)
        for layer in self.model.layers:
            h = layer(h, attention_mask=mask, position_embeddings=pe, position_ids=positions, cache=cache)
        return self.model.norm(h)

    def prefill(self, ids, length):
        n = ids.shape[1]
        dtype = self.k0.dtype
        mask = torch.full((n, n), torch.finfo(dtype).min, dtype=dtype).triu(1)[None, None]
        h = self._run(ids, torch.arange(n)[None], mask, KVCache(self))
        return self.lm_head(h.index_select(1, length - 1))[:, 0].float()

    def decode(self, token, position):
        dtype = self.k0.dtype
        keep = torch.arange(lw.MAX_CONTEXT) <= position
        mask = torch.where(keep, 0.0, torch.finfo(dtype).min).to(dtype)[None, None, None]
        h = self._run(token, position[None], mask, KVCache(self, position))
        return self.lm_head(h)[:, 0].float()


def build(config_name: str, dtype: str = "f32", weights: bool = True) -> nn.Module:
    """The LlamaForCausalLM of ``llama_weights.CONFIGS[config_name]`` in
    ``dtype``, its weights the seeded ones (``weights=False``: left as
    ``transformers`` made them, for an export, whose weights are external)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(**lw.CONFIGS[config_name], **lw.COMMON)
    torch.manual_seed(0)
    lm = LlamaForCausalLM(config).eval()
    if weights:
        state = {n: torch.from_numpy(a) for n, a in lw.seeded_weights(lw.CONFIGS[config_name], "f32")}
        lm.load_state_dict(state, strict=True)
    return lm.to(TORCH_DTYPES[dtype])


def export(lm: nn.Module, module_name: str):
    """iree-turbine's export of ``LlamaGenerate(lm)``: functions ``prefill``
    and ``decode``, the weights parameters of scope ``model``, the cache
    zeroed mutable globals."""
    from iree.turbine import aot
    from iree.turbine.aot import ExternalTensorTrait

    gen = LlamaGenerate(lm).eval()
    aot.externalize_module_parameters(gen, external_scope=lw.SCOPE)
    for name, buf in gen.named_buffers():
        if name[0] in "kv" and name[1:].isdigit():
            ExternalTensorTrait(external_scope=CACHE_SCOPE, external_name=f"cache.{name}").set(buf)
    fxb = aot.FxProgramsBuilder(gen)
    ids, one = torch.zeros(1, lw.PROMPT_TOKENS, dtype=torch.int64), torch.ones(1, dtype=torch.int64)

    @fxb.export_program(name="prefill", args=(ids, one), strict=False)
    def prefill(m, ids, length):
        return m.prefill(ids, length)

    @fxb.export_program(name="decode", args=(torch.zeros(1, 1, dtype=torch.int64), one), strict=False)
    def decode(m, token, position):
        return m.decode(token, position)

    exported = aot.export(fxb, module_name=module_name)
    zero_caches(exported.mlir_module)
    exported.verify()
    return exported


def zero_caches(module) -> int:
    """Gives every global iree-turbine made for a cache buffer (a parameter
    of scope CACHE_SCOPE, by the trait ``export`` set) the initial value
    zeros, a splat; -> how many. Zeros, not undefined memory: a position
    not yet written is masked, and a masked NaN would still reach the
    attention's product."""
    from iree.compiler import ir

    count = 0
    with module.context:
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name != "util.global" or "initial_value" not in op.attributes:
                continue
            if f'"{CACHE_SCOPE}"::' not in str(op.attributes["initial_value"]):
                continue
            tensor = str(op.attributes["type"])
            zero = "0.0" if tensor.rstrip(">").endswith("f32") or tensor.rstrip(">").endswith("f16") else "0"
            op.attributes["initial_value"] = ir.Attribute.parse(f"dense<{zero}> : {tensor}")
            count += 1
    return count


def torch_greedy(lm: nn.Module, prompt_ids: np.ndarray, new_tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """torch's greedy decoding with ``transformers``' own ``generate`` (its
    DynamicCache), on the device ``lm`` is on: the new ids (int64) and each
    step's logits (f32, ``[new_tokens, vocab]``)."""
    ids = torch.from_numpy(prompt_ids[None].astype(np.int64)).to(lm.lm_head.weight.device)
    with torch.no_grad():
        out = lm.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                          output_logits=True, return_dict_in_generate=True)
    new = out.sequences[0, ids.shape[1]:].cpu().numpy()
    logits = torch.cat([s.float() for s in out.logits]).cpu().numpy()
    return new, logits


def wrapper_greedy(lm: nn.Module, prompt_ids: np.ndarray, new_tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """The same through LlamaGenerate in torch (what the export traces):
    its ids must be torch_greedy's."""
    gen = LlamaGenerate(lm).eval()
    ids = torch.zeros(1, lw.PROMPT_TOKENS, dtype=torch.int64)
    ids[0, :len(prompt_ids)] = torch.from_numpy(prompt_ids)
    out, steps = [], []
    with torch.no_grad():
        logits = gen.prefill(ids, torch.tensor([len(prompt_ids)]))
        for i in range(new_tokens):
            steps.append(logits[0].numpy())
            out.append(int(logits.argmax()))
            if i + 1 < new_tokens:
                logits = gen.decode(torch.tensor([[out[-1]]]), torch.tensor([len(prompt_ids) + i]))
    return np.array(out, np.int64), np.stack(steps)
