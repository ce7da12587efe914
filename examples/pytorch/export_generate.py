#!/usr/bin/env python3
"""Export the generation Llamas (llama_generate.py) with iree-turbine into
exported_generate/, with torch's greedy references, for mdc.generate.

    python examples/pytorch/export_generate.py               # the tiny config, f32 and f16, with references
    python examples/pytorch/export_generate.py --tinyllama   # also the TinyLlama-sized MLIR (no weights)

Run it in the export environment (README.md). For the tiny config and each
dtype D it writes:

  llama_tiny_D.mlir         functions prefill and decode (docs/mdc-generate.md)
  llama_tiny_D.irpa         the seeded weights (llama_weights.py), scope "model"
  llama_tiny.prompt.npy     the prompt's token ids (int64)
  llama_tiny_D.torch_ids.npy     torch's greedy new ids (transformers' generate)
  llama_tiny_D.torch_logits.npy  torch's logits at each new id, f32 [NEW_TOKENS, vocab]
  index.json                per export: files, config, prompt length, new tokens

With --tinyllama, also llama_tinyllama_D.mlir: the TinyLlama-sized model,
whose weights (4.4 GB in f32) are made from the seed where it runs
(test/e2e/gpu_generate.py). Every file is rewritten only if its bytes change.
Before writing, the wrapper's own greedy loop in torch (what the export
traces) is checked against transformers' generate: in f32 every id must
agree (exit 1 otherwise); in f16 the first disagreement is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
NEW_TOKENS = 64
TINY_PROMPT = 12


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--out", default=os.path.join(HERE, "exported_generate"), help="output folder")
    p.add_argument("--tinyllama", action="store_true", help="also export the TinyLlama-sized MLIR (no weights)")
    return p.parse_args(argv)


def _save_mlir(exported, path: str) -> None:
    from export import _replace_if_changed

    tmp = path + ".tmp"
    exported.save_mlir(tmp)
    _replace_if_changed(tmp, path)


def export_tiny(out: str, dtype: str) -> dict:
    """The tiny config in ``dtype``: MLIR, weights, torch's references."""
    import numpy as np
    from iree.turbine import aot

    import llama_generate as lg
    import llama_weights as lw
    from export import _replace_if_changed, write_npy

    name = f"llama_tiny_{dtype}"
    lm = lg.build("tiny", dtype)
    prompt = lw.prompt(lw.CONFIGS["tiny"], TINY_PROMPT)
    ids, logits = lg.torch_greedy(lm, prompt, NEW_TOKENS)
    mine, _ = lg.wrapper_greedy(lm, prompt, NEW_TOKENS)
    same = int(np.argmin(ids == mine)) if (ids != mine).any() else NEW_TOKENS
    print(f"{name}: the wrapper's greedy ids equal generate's for {same} of {NEW_TOKENS}")
    if dtype == "f32" and same < NEW_TOKENS:
        raise SystemExit(f"error: {name}: the wrapper differs from transformers' generate at new token {same}")
    exported = lg.export(lm, name)
    _save_mlir(exported, os.path.join(out, f"{name}.mlir"))
    tmp = os.path.join(out, f".{name}.tmp.irpa")
    aot.save_module_parameters(tmp, lg.LlamaGenerate(lm))
    _replace_if_changed(tmp, os.path.join(out, f"{name}.irpa"))
    write_npy(np, os.path.join(out, "llama_tiny.prompt.npy"), prompt)
    write_npy(np, os.path.join(out, f"{name}.torch_ids.npy"), ids)
    write_npy(np, os.path.join(out, f"{name}.torch_logits.npy"), logits.astype(np.float32))
    return {"mlir": f"{name}.mlir", "parameters": {"file": f"{name}.irpa", "scope": lw.SCOPE},
            "config": "tiny", "dtype": dtype, "prompt": "llama_tiny.prompt.npy", "prompt_tokens": TINY_PROMPT,
            "new_tokens": NEW_TOKENS, "torch_ids": f"{name}.torch_ids.npy",
            "torch_logits": f"{name}.torch_logits.npy", "wrapper_agrees_for": same}


def export_tinyllama(out: str, dtype: str) -> dict:
    """The TinyLlama-sized MLIR in ``dtype``, its weights left external
    (the ones ``transformers`` draws here are not saved)."""
    import llama_generate as lg

    name = f"llama_tinyllama_{dtype}"
    exported = lg.export(lg.build("tinyllama", dtype, weights=False), name)
    _save_mlir(exported, os.path.join(out, f"{name}.mlir"))
    return {"mlir": f"{name}.mlir", "config": "tinyllama", "dtype": dtype,
            "parameters": {"file": None, "scope": "model", "made_by": "llama_weights.write_archive"}}


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    sys.path.insert(0, HERE)
    try:
        import torch
        import turbine_compat  # noqa: F401  (restores what iree-base-compiler 3.13 dropped)
    except ImportError as e:
        from export import ENV_HELP
        print(f"error: {ENV_HELP}Missing: {e.name or e}.", file=sys.stderr)
        return 1
    torch.set_num_threads(1)  # one summation order for the references
    os.makedirs(args.out, exist_ok=True)
    index = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.filterwarnings("ignore", "While compiling, we found certain side effects", UserWarning)
        for dtype in ("f32", "f16"):
            index[f"llama_tiny_{dtype}"] = export_tiny(args.out, dtype)
            print(f"exported llama_tiny_{dtype}")
        if args.tinyllama:
            for dtype in ("f32", "f16"):
                index[f"llama_tinyllama_{dtype}"] = export_tinyllama(args.out, dtype)
                print(f"exported llama_tinyllama_{dtype}")
    path = os.path.join(args.out, "index.json")
    if os.path.exists(path):
        with open(path) as f:
            index = {**json.load(f), **index}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(index, f, indent=2, sort_keys=True)
        f.write("\n")
    from export import _replace_if_changed
    _replace_if_changed(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
