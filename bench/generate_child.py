"""One line of ``bench generate run``, in a process of its own:

    python -m bench.generate_child SPEC.json

SPEC says who runs (``who``) and with what; the last line of stdout is
the result as JSON. A process a line, so that GPU memory is measured from
a clean start, torch's CPU threads never share the machine with IREE's
workers, and one failure is one line.

* ``archive``: the seeded weights (examples/pytorch/llama_weights.py) as
  a parameter archive, and a stamp beside it saying what it holds;
* ``checkpoint``: the model from that archive saved with
  ``save_pretrained``, for accelerate's line (``from_pretrained`` is how
  its users load a model under a ``max_memory``);
* ``mdc``: the kit's module loaded with the archive (mdc.runtime_shim.load),
  mdc.generate;
* ``torch``: ``transformers``' LlamaForCausalLM, its weights read from the
  archive, on ``device`` ("cuda" or "cpu"); ``gpu_blocks`` (the hand
  split): those blocks on the GPU and the rest of the model on the CPU,
  each block's inputs moved to its device where they are not (``.to()``;
  a value is moved once a step);
* ``accelerate``: ``from_pretrained(checkpoint, device_map="auto",
  max_memory=...)``: what accelerate 1.15 does with the blocks it maps to
  "cpu" is dispatch_model's, unchanged (generate.py's doc says what).

torch's greedy decoding is the model's own forward with a DynamicCache:
the prompt in one call (``logits_to_keep=1``), then one token a call,
each new id the argmax, as transformers' ``generate`` does with
``do_sample=False``. Prefill's time is its call and argmax; decode's, the
later calls and theirs (mdc.generate's split). TF32 and reduced-precision
f16 sums are off; torch runs ``os.cpu_count()`` CPU threads. With a CUDA
device, GPU memory is sampled while the line runs (profiler/memory.py's
CudaMemory, opened before anything else touches the GPU): ``grown``, the
peak less what was in use once the CUDA context was open; ``held``, the
peak less what the GPU used before this process opened it (the context
included); and torch's own ``max_memory_allocated``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback

import numpy as np

from .generate_kit import llama_weights

WARM_UP_TOKENS = 2  # a generation before the timed one: kernels loaded, allocators warm


def archive(spec: dict) -> dict:
    lw = llama_weights()
    began = time.perf_counter()
    lw.write_archive(spec["irpa"], lw.CONFIGS[spec["config"]], spec["dtype"])
    with open(spec["irpa"] + ".json", "w") as f:
        json.dump(stamp(spec), f)
    return {"seconds": time.perf_counter() - began, "bytes": os.path.getsize(spec["irpa"])}


def stamp(spec: dict) -> dict:
    """What an archive holds: its config, dtype and seed."""
    return {"config": spec["config"], "dtype": spec["dtype"], "seed": llama_weights().SEED}


def _torch_model(spec: dict):
    """LlamaForCausalLM of the spec's config, its weights the archive's
    (made on the meta device, so no weights are drawn only to be
    replaced), on the CPU."""
    import iree.runtime as rt
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    lw = llama_weights()
    config = LlamaConfig(**lw.CONFIGS[spec["config"]], **lw.COMMON)
    with torch.device("meta"):
        lm = LlamaForCausalLM(config)
    index = rt.ParameterIndex()
    index.load(spec["irpa"])
    entries = dict(index.items())
    dtype = lw.DTYPES[spec["dtype"]]
    state = {name: torch.from_numpy(np.frombuffer(entries[name].file_view, dtype).reshape(shape).copy())
             for name, shape in lw.weight_shapes(lw.CONFIGS[spec["config"]]).items()}
    lm.load_state_dict(state, strict=True, assign=True)
    lm.model.rotary_emb = LlamaRotaryEmbedding(config=config)  # its buffers are no weights: made here
    return lm.eval()


def checkpoint(spec: dict) -> dict:
    began = time.perf_counter()
    _torch_model(spec).save_pretrained(spec["checkpoint"])
    with open(os.path.join(spec["checkpoint"], "stamp.json"), "w") as f:
        json.dump(stamp(spec), f)
    return {"seconds": time.perf_counter() - began}


class _Mover:
    """The hand split's ``.to()``: forward pre-hooks that move a module's
    tensor inputs to its device, each tensor once a step (the mask and
    the rotary tables are every block's)."""

    def __init__(self, torch):
        self.torch, self.moved = torch, {}

    def clear(self, *_):
        self.moved.clear()

    def _move(self, x, device):
        if isinstance(x, self.torch.Tensor) and x.device != device:
            key = (id(x), str(device))
            if key not in self.moved:
                self.moved[key] = (x, x.to(device))  # x held: its id is not reused this step
            return self.moved[key][1]
        if isinstance(x, tuple):
            return tuple(self._move(t, device) for t in x)
        return x

    def hook(self, device):
        def pre(_module, args, kwargs):
            return tuple(self._move(a, device) for a in args), {k: self._move(v, device) for k, v in kwargs.items()}

        return pre


def _hand_split(torch, lm, gpu_blocks: list[int], gpu=None):
    """``gpu_blocks`` of ``lm`` on the GPU (``gpu``: cuda:0), the rest on
    the CPU (_Mover)."""
    cuda, cpu = gpu or torch.device("cuda", 0), torch.device("cpu")
    mover = _Mover(torch)
    lm.register_forward_pre_hook(mover.clear)
    for i in gpu_blocks:
        lm.model.layers[i].to(cuda)
        lm.model.layers[i].register_forward_pre_hook(mover.hook(cuda), with_kwargs=True)
    for i in sorted(set(range(len(lm.model.layers))) - set(gpu_blocks)):
        lm.model.layers[i].register_forward_pre_hook(mover.hook(cpu), with_kwargs=True)
    lm.model.norm.register_forward_pre_hook(mover.hook(cpu), with_kwargs=True)
    return lm


def torch_greedy(torch, lm, prompt: np.ndarray, new_tokens: int, device) -> dict:
    """Greedy decoding with the model's forward and a DynamicCache (the
    module's doc): ids, logits, prefill and decode seconds."""
    from transformers import DynamicCache

    cache = DynamicCache(config=lm.config)
    ids, kept = [], []
    with torch.inference_mode():
        began = time.perf_counter()
        step = torch.from_numpy(prompt[None].astype(np.int64)).to(device)
        out = lm(input_ids=step, past_key_values=cache, use_cache=True, logits_to_keep=1)
        ids.append(int(out.logits[0, -1].argmax()))
        prefill = time.perf_counter() - began
        kept.append(out.logits[0, -1].float())
        decode = 0.0
        for _ in range(new_tokens - 1):
            began = time.perf_counter()
            step = torch.tensor([[ids[-1]]], dtype=torch.int64, device=device)
            out = lm(input_ids=step, past_key_values=cache, use_cache=True, logits_to_keep=1)
            ids.append(int(out.logits[0, -1].argmax()))
            decode += time.perf_counter() - began
            kept.append(out.logits[0, -1].float())
    logits = torch.stack([k.cpu() for k in kept]).numpy()
    return {"ids": np.array(ids, np.int64), "logits": logits, "prefill_s": prefill, "decode_s": decode}


def _torch_line(spec: dict, memory) -> dict:
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    prompt = np.load(spec["prompt"])
    with memory:
        began = time.perf_counter()
        if spec["who"] == "accelerate":
            lm, device, placed = _accelerate(torch, spec)
        else:
            lm = _torch_model(spec)
            gpu_blocks = spec.get("gpu_blocks")
            if gpu_blocks is not None:
                lm, device = _hand_split(torch, lm, gpu_blocks), torch.device("cpu")
                placed = f"{len(gpu_blocks)}"
            else:
                device = torch.device(spec["device"])
                lm = lm.to(device)
                placed = "all" if spec["device"] == "cuda" else "0"
        load_s = time.perf_counter() - began
        torch_greedy(torch, lm, prompt, WARM_UP_TOKENS, device)
        got = torch_greedy(torch, lm, prompt, spec["new_tokens"], device)
    allocated = torch.cuda.max_memory_allocated() if torch.cuda.is_initialized() else None
    gpu = f", GPU {torch.cuda.get_device_name(0)}" if torch.cuda.is_initialized() else ""
    about = (f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads{gpu}, TF32 "
             f"{torch.backends.cuda.matmul.allow_tf32}")
    if spec["who"] == "accelerate":
        import accelerate
        import transformers

        about += f"; accelerate {accelerate.__version__}, transformers {transformers.__version__}"
    return {**got, "load_s": load_s, "placed": placed, "torch_allocated": allocated, "about": about}


def _accelerate(torch, spec: dict):
    """from_pretrained under ``max_memory`` (its keys: GPU 0 and "cpu");
    -> (model, the device its ids go to, the blocks accelerate keeps on
    the GPU: a count, and what it streams)."""
    from transformers import LlamaForCausalLM

    lw = llama_weights()
    max_memory = {(int(k) if k.isdigit() else k): v for k, v in spec["max_memory"].items()}
    lm = LlamaForCausalLM.from_pretrained(spec["checkpoint"], device_map="auto", max_memory=max_memory,
                                          dtype=getattr(torch, {"f32": "float32", "f16": "float16"}[spec["dtype"]]),
                                          attn_implementation="eager").eval()
    where = getattr(lm, "hf_device_map", {"": "cpu"})
    blocks = lw.CONFIGS[spec["config"]]["num_hidden_layers"]
    gpu = [i for i in range(blocks) if _mapped(where, f"model.layers.{i}") not in ("cpu", "disk")]
    streamed = any(d in ("cpu", "disk") for d in where.values()) and len(set(where.values())) > 1
    head = _mapped(where, "lm_head") not in ("cpu", "disk")
    placed = f"{len(gpu)}{'H' if head else ''}" + (" (+rest streamed)" if streamed else "")
    device = torch.device("cuda", 0) if any(d not in ("cpu", "disk") for d in where.values()) else torch.device("cpu")
    return lm, device, placed


def _mapped(where: dict, name: str):
    """The device accelerate's map gives module ``name`` (its own entry or
    the nearest enclosing one's)."""
    parts = name.split(".")
    for k in range(len(parts), -1, -1):
        key = ".".join(parts[:k])
        if key in where:
            return where[key]
    return "cpu"


def _mdc_line(spec: dict, memory) -> dict:
    from mdc.runtime_shim import load
    from mdc.runtime_shim.generate import generate

    prompt = np.load(spec["prompt"])
    with memory:
        began = time.perf_counter()
        with load(spec["file"], spec["devices"], parameters=[f"{llama_weights().SCOPE}={spec['irpa']}"]) as m:
            load_s = time.perf_counter() - began
            generate(m, prompt, WARM_UP_TOKENS)
            got = generate(m, prompt, spec["new_tokens"], keep_logits=True)
    return {"ids": got.ids, "logits": got.logits, "prefill_s": got.prefill_s, "decode_s": got.decode_s,
            "load_s": load_s, "about": f"mdc on {'+'.join(spec['devices'])}"}


def _memory(spec: dict):
    """CudaMemory where the spec asks for it (a CUDA device is there), else
    a context that measures nothing."""
    if not spec.get("memory"):
        return contextlib.nullcontext()
    from mdc.profiler.memory import CudaMemory

    return CudaMemory()


def measure(spec: dict) -> dict:
    memory = _memory(spec)
    line = (_mdc_line if spec["who"] == "mdc" else _torch_line)(spec, memory)
    np.save(spec["out"] + ".ids.npy", line.pop("ids"))
    np.save(spec["out"] + ".logits.npy", line.pop("logits"))
    if spec.get("memory"):
        line.update(grown=memory.grown, held=memory.held)
    return line


def main(argv: list[str]) -> int:
    with open(argv[0]) as f:
        spec = json.load(f)
    does = {"archive": archive, "checkpoint": checkpoint}.get(spec["who"], measure)
    try:
        result = does(spec)
    except Exception as e:  # one line's failure, said on its last line
        traceback.print_exc()
        print(json.dumps({"failed": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}), flush=True)
        return 1
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
