"""The Llama configurations of mdc's generation exports and their seeded
weights, with numpy alone (no torch): the GPU machine makes the TinyLlama-
sized weights from the seed where it runs, as a parameter archive, and
loads the same arrays into ``transformers``' model for torch's reference.

Each weight has its own generator, ``numpy.random.default_rng([SEED, i])``
for the i-th name of ``weight_shapes`` (sorted), so a weight does not
depend on the others or on ``transformers``' own initialisation order:
matrices are normal with scale 0.02 (``initializer_range``, as
``transformers`` draws them), RMSNorm scales are ones. An f16 model's
weights are the f32 ones rounded to f16.
"""

from __future__ import annotations

import numpy as np

SEED = 20261206
SCALE = 0.02
PROMPT_TOKENS = 128  # prefill's padded prompt: [1, PROMPT_TOKENS] token ids
MAX_CONTEXT = 256  # positions of the KV cache: a prompt of 128 and 128 new tokens
SCOPE = "model"  # the parameters' scope (--parameters=model=NAME.irpa)

# Token ids 0..vocab-1, eager attention (plain matmuls and a softmax), no
# end of sequence: greedy decoding runs for every new token asked for.
COMMON = dict(bos_token_id=0, eos_token_id=None, pad_token_id=0, attn_implementation="eager",
              max_position_embeddings=MAX_CONTEXT, tie_word_embeddings=False)
CONFIGS = {
    # committed with its torch references, for CI: 2 blocks of width 64
    "tiny": dict(num_hidden_layers=2, hidden_size=64, intermediate_size=176, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=1024),
    # TinyLlama-1.1B's shape: 1.1G weights, 4.4 GB in f32; made where it runs
    "tinyllama": dict(num_hidden_layers=22, hidden_size=2048, intermediate_size=5632, num_attention_heads=32,
                      num_key_value_heads=4, vocab_size=32000),
}
DTYPES = {"f32": np.float32, "f16": np.float16}


def weight_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """``LlamaForCausalLM``'s state_dict names and shapes for ``config``
    (one of CONFIGS), sorted by name."""
    h, f, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    d = h // config["num_attention_heads"]
    kv = config["num_key_value_heads"] * d
    shapes = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,), "lm_head.weight": (v, h)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.update({
            p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
            p + "self_attn.q_proj.weight": (h, h), p + "self_attn.k_proj.weight": (kv, h),
            p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.o_proj.weight": (h, h),
            p + "mlp.gate_proj.weight": (f, h), p + "mlp.up_proj.weight": (f, h),
            p + "mlp.down_proj.weight": (h, f),
        })
    return dict(sorted(shapes.items()))


def seeded_weights(config: dict, dtype: str = "f32", seed: int = SEED):
    """(name, array) for every weight of ``config``, in ``weight_shapes``'
    order, in ``dtype`` ("f32" or "f16"); made one at a time."""
    for i, (name, shape) in enumerate(weight_shapes(config).items()):
        if name.endswith("layernorm.weight") or name == "model.norm.weight":
            w = np.ones(shape, np.float32)
        else:
            w = np.random.default_rng([seed, i]).standard_normal(shape, dtype=np.float32) * np.float32(SCALE)
        yield name, w.astype(DTYPES[dtype], copy=False)


def write_archive(path: str, config: dict, dtype: str = "f32", seed: int = SEED) -> str:
    """The seeded weights as a parameter archive at ``path`` (iree.runtime);
    -> ``model=path``, as ``--parameters`` and ``load(parameters=...)`` take it."""
    import iree.runtime as rt

    index = rt.ParameterIndex()
    for name, array in seeded_weights(config, dtype, seed):
        index.add_buffer(name, np.ascontiguousarray(array))
    index.create_archive_file(path)
    return f"{SCOPE}={path}"


def prompt(config: dict, length: int, seed: int = SEED) -> np.ndarray:
    """``length`` token ids (int64) of the reference runs' prompt."""
    return np.random.default_rng([seed, 1 << 20]).integers(1, config["vocab_size"], size=length, dtype=np.int64)
