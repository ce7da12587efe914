"""``bench generate run DIR``: generation under a GPU memory budget (issue 46
item 4), on the GPU machine (runtime wheel, numpy, torch, transformers,
accelerate).

The weights are made from the seed once (examples/pytorch/
llama_weights.py), as a parameter archive in a scratch folder (f32, and
f16 for the f16 lines), and saved with ``save_pretrained`` for
accelerate's line; every line reuses them. Then each line in a process of
its own (generate_child.py), each under a timeout, the run under a
deadline:

* ``torch``: torch with everything on the GPU, f32 (its ids are every f32
  line's reference) and f16;
* ``mdc``: the kit's ``--place=auto`` module of each budget, and the f16
  module all on the GPU, through mdc.generate;
* ``hand``: torch split by hand at each partial budget: the last n blocks
  (the blocks the budget fits) on the GPU, the embedding, the other
  blocks, the final norm and the head on the CPU, the hidden state moved
  with ``.to()`` where it changes device; at budget 0 all on the CPU (at
  the full budget the hand split is the ``torch`` line);
* ``accelerate``: ``from_pretrained(device_map="auto", max_memory={0:
  the budget's weight bytes, "cpu": ...})``. max_memory counts weights
  alone, so the budget's reserved bytes, working allowance and KV cache
  (generate_kit.py), which accelerate does not count but uses, are not
  given to it. What accelerate 1.15 does with the blocks it maps to
  "cpu" is dispatch_model's: with a GPU in the map they run on GPU 0 (the
  main device), their weights kept in CPU memory and copied to the GPU
  before each forward and dropped after (AlignDevicesHook with offload);
  with nothing on the GPU (budget 0) the model stays and runs on the CPU.
  Its map keeps room on the GPU for the largest module it may stream
  (the head), inside max_memory.

Each line: a prompt of the export's prefill size (128 tokens), greedy
decoding of NEW_TOKENS (a generation of 2 before, as warm-up); prefill ms,
decode tokens/s, GPU memory (generate_child.py: ``grown``, the peak less
the use with the CUDA context open, judged against the budget; ``held``,
the context included; torch's max_memory_allocated), and whether the ids
are torch's all-GPU f32 ids (f32 lines must be; f16 lines are compared
with torch's f16 ids, and said). The table and the targets
(generate_table.py) follow. ``--only``, ``--budgets`` and ``--scratch``
split a run across calls: the scratch folder keeps the weights, the
reference ids and every line's result, and each run prints the table of
all of them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time

from .common import Config
from .generate_kit import EXPORTED, FORMAT, llama_weights
from .generate_table import table
from .kitframe import (KitError, checkout_env, device_missing, incomplete, json_lines, no_device, read_manifest,
                       require_files, run_timed, verdict)

TOOLS = ("mdc", "torch", "hand", "accelerate")
# Rough seconds a line takes on the H100 machine (for the plan printed first).
EXPECT_S = {"mdc": 20, "torch": 20, "hand": 30, "accelerate": 35, "archive": 40, "checkpoint": 45}
RESULTS = "results.jsonl"


@dataclasses.dataclass(frozen=True)
class Line:
    """One line: its key, tool, dtype, the kit's budget row (None: the f16
    lines, no budget), the child's spec (the fields of its own) and the
    weights it reads ("f32", "f16", "checkpoint")."""

    key: str
    tool: str
    dtype: str
    budget: dict | None
    spec: dict
    needs: str

    @property
    def label(self) -> str:
        if self.tool == "hand" and self.spec.get("device") == "cpu":
            return "torch CPU"
        if self.tool == "torch":
            return f"torch GPU{' f16' if self.dtype == 'f16' else ''}"
        return {"mdc": "mdc auto" if self.budget else "mdc GPU f16", "hand": "torch hand"}.get(self.tool, self.tool)


def read_kit(path: str) -> dict:
    kit = read_manifest(path, "kit.json", build=f"python -m bench generate build {path}", kind="generate",
                        fmt=FORMAT)
    try:
        files = [b["file"] for b in kit["budgets"]] + ([kit["f16_gpu"]["file"]] if kit["f16_gpu"] else [])
        _ = (kit["sizes"]["blocks"], kit["devices"], kit["prompt_tokens"], kit["config"])  # what the run reads
    except (KeyError, TypeError) as e:
        raise incomplete(path, "kit.json", e) from None
    require_files(path, files)
    return kit


def plan_lines(kit: dict, path: str, only: list[str], fractions: list[float] | None) -> list[Line]:
    """The lines asked for, in the order they run (torch's f32 first: the reference)."""
    blocks = kit["sizes"]["blocks"]
    rows = [b for b in kit["budgets"] if fractions is None or any(abs(b["fraction"] - f) < 1e-9 for f in fractions)]
    lines = []
    if "torch" in only and not kit["smoke"]:
        lines += [Line(f"torch-{d}", "torch", d, _full(kit) if d == "f32" else None, {"who": "torch", "device": "cuda"},
                       d) for d in ("f32", "f16")]
    if "mdc" in only:
        if kit["f16_gpu"]:
            lines.append(Line("mdc-f16", "mdc", "f16", None, {"who": "mdc", "file": os.path.join(
                path, kit["f16_gpu"]["file"]), "devices": kit["f16_gpu"]["devices"]}, "f16"))
        lines += [Line(f"mdc-{b['name']}", "mdc", "f32", b, {"who": "mdc", "file": os.path.join(path, b["file"]),
                                                            "devices": kit["devices"]}, "f32") for b in rows]
    if "hand" in only and not kit["smoke"]:
        for b in rows:
            if b["fits"] == 0:
                lines.append(Line("hand-n0", "hand", "f32", b, {"who": "torch", "device": "cpu"}, "f32"))
            elif b["fits"] < blocks:
                lines.append(Line(f"hand-{b['name']}", "hand", "f32", b, {
                    "who": "torch", "gpu_blocks": list(range(blocks - b["fits"], blocks))}, "f32"))
    if "accelerate" in only and not kit["smoke"]:
        lines += [Line(f"accelerate-{b['name']}", "accelerate", "f32", b, {
            "who": "accelerate", "max_memory": {"0": b["weights_bytes"], "cpu": _host_room(kit)}}, "checkpoint")
            for b in rows]
    return lines


def _full(kit: dict) -> dict | None:
    """The budget that fits every block, if the kit has it."""
    return next((b for b in kit["budgets"] if b["fits"] == kit["sizes"]["blocks"]), None)


def _host_room(kit: dict) -> int:
    """accelerate's "cpu" max_memory: room for the whole model twice over."""
    s = kit["sizes"]
    return 2 * (s["blocks"] * s["block"] + s["embedding"] + s["head"])


class Scratch:
    """The scratch folder: weights, prompt, reference ids and results."""

    def __init__(self, kit: dict, path: str, folder: str | None, new_tokens: int):
        self.kit, self.keep = kit, folder is not None
        self.dir = os.path.abspath(folder) if folder else tempfile.mkdtemp(prefix="mdc-generate-")
        os.makedirs(self.dir, exist_ok=True)
        self.new_tokens = new_tokens
        with open(os.path.join(path, "kit.json"), "rb") as f:
            self.tag = hashlib.sha256(f.read()).hexdigest()[:16] + f"/{new_tokens}"  # results of this kit and length

    def file(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def archive(self, dtype: str) -> str:
        if self.kit["smoke"]:  # the tiny config's committed parameters
            return os.path.join(EXPORTED, f"llama_tiny_{dtype}.irpa")
        return self.file(f"{self.kit['config']}_{dtype}.irpa")

    def results(self) -> dict:
        return {r["key"]: r for r in json_lines(self.file(RESULTS)) if r.get("tag") == self.tag}

    def record(self, key: str, result: dict) -> None:
        with open(self.file(RESULTS), "a") as f:
            f.write(json.dumps({**result, "key": key, "tag": self.tag}) + "\n")

    def done(self) -> None:
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def child(spec: dict, scratch: Scratch, timeout: float) -> dict:
    """``spec`` run by generate_child.py in its own process, under ``timeout``."""
    path = scratch.file(f"spec_{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    ran = run_timed([sys.executable, "-m", "bench.generate_child", path], timeout, env=checkout_env())
    if ran.status == "TIMEOUT":
        return {"failed": f"took over {timeout:.0f} s (timed out)", "seconds": ran.seconds}
    lines = ran.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {"failed": ran.first_error(300)}
    except ValueError:
        result = {"failed": lines[-1][:300]}
    if not ran.ok and "failed" not in result:
        result = {"failed": ran.first_error(300)}
    return {**result, "seconds": ran.seconds}


def _prompt(kit: dict, scratch: Scratch) -> str:
    import numpy as np

    lw = llama_weights()
    path = scratch.file("prompt.npy")
    if kit["smoke"]:  # the committed references' prompt
        prompt = np.load(os.path.join(EXPORTED, "llama_tiny.prompt.npy"))
    else:
        prompt = lw.prompt(lw.CONFIGS[kit["config"]], kit["prompt_tokens"])
    np.save(path, prompt)
    return path


def weight_steps(kit: dict, lines: list[Line], scratch: Scratch) -> list[tuple]:
    """(who, dtype, path) of each weights file the lines read: the f32 and
    f16 archives, and accelerate's checkpoint (made from the f32 archive)."""
    needs = {line.needs for line in lines}
    steps = [("archive", d, scratch.archive(d)) for d in ("f32", "f16") if d in needs or
             (d == "f32" and "checkpoint" in needs)]
    if "checkpoint" in needs:
        steps.append(("checkpoint", "f32", scratch.file(f"{kit['config']}_f32_checkpoint")))
    return steps


def prepare(kit: dict, steps: list[tuple], scratch: Scratch, deadline: float) -> str | None:
    """The weights files of ``steps`` (weight_steps), made (or found made)
    in the scratch folder; None, or why not."""
    from .generate_child import stamp

    for who, dtype, path in steps:
        spec = {"who": who, "config": kit["config"], "dtype": dtype, "irpa": scratch.archive(dtype),
                "checkpoint": path}
        marker = path + ".json" if who == "archive" else os.path.join(path, "stamp.json")
        if kit["smoke"] or _stamped(marker, stamp(spec)):
            print(f"  {who} {dtype}: {path} (made before)", flush=True)
            continue
        print(f"  {who} {dtype}: making {path} ...", flush=True)
        r = child(spec, scratch, max(deadline - time.monotonic(), 1.0))
        if "failed" in r:
            return f"{who} {dtype}: {r['failed']}"
        print(f"  {who} {dtype}: made in {r['seconds']:.1f} s", flush=True)
    return None


def _stamped(marker: str, want: dict) -> bool:
    try:
        with open(marker) as f:
            return json.load(f) == want
    except (OSError, ValueError):
        return False


def _spec(kit: dict, line: Line, scratch: Scratch, prompt: str, memory: bool) -> dict:
    return {**line.spec, "config": kit["config"], "dtype": line.dtype, "prompt": prompt,
            "new_tokens": scratch.new_tokens, "memory": memory, "out": scratch.file(line.key),
            "irpa": scratch.archive("f32" if line.needs == "checkpoint" else line.needs),
            "checkpoint": scratch.file(f"{kit['config']}_f32_checkpoint")}


def _reference(kit: dict, scratch: Scratch, dtype: str):
    """(ids, logits) every line of ``dtype`` is checked against: torch's on
    the GPU (this run's or an earlier one's in the scratch folder), or the
    committed tiny ones (--smoke); None where there are none yet."""
    import numpy as np

    if kit["smoke"]:
        prefix = os.path.join(EXPORTED, f"llama_tiny_{dtype}.torch_")
        return np.load(prefix + "ids.npy"), np.load(prefix + "logits.npy")
    prefix = scratch.file(f"torch-{dtype}")
    if f"torch-{dtype}" not in scratch.results() or not os.path.exists(prefix + ".ids.npy"):
        return None
    return np.load(prefix + ".ids.npy"), np.load(prefix + ".logits.npy")


def check_ids(kit: dict, line: Line, scratch: Scratch) -> dict:
    """The line's ids against the reference of its dtype: ``same`` (all),
    or where they first differ, with both sides' logits."""
    import numpy as np

    from mdc.runtime_shim.generate import describe_divergence, first_divergence

    ref = _reference(kit, scratch, line.dtype)
    if ref is None:
        return {"ids": "n/a", "ids_note": f"no torch GPU {line.dtype} reference yet"}
    try:
        ids, logits = np.load(scratch.file(line.key) + ".ids.npy"), np.load(scratch.file(line.key) + ".logits.npy")
    except OSError:
        return {"ids": "n/a", "ids_note": "its ids are gone from the scratch folder"}
    n = min(len(ids), len(ref[0]))
    d = first_divergence(ids[:n], logits, ref[0][:n], ref[1])
    return {"ids": "same" if d is None else f"from {d['step']}", "ids_same": d is None,
            "ids_note": describe_divergence(d, n)}


def _plan_text(lines: list[Line], prepared: int) -> str:
    total = sum(EXPECT_S[line.tool] for line in lines) + prepared
    return (f"{len(lines)} lines ({', '.join(line.key for line in lines)}); expected about {total / 60:.1f} minutes "
            f"on the H100 machine, weights included ({prepared} s)")


def run(config: Config, path: str, only: list[str], fractions: list[float] | None, new_tokens: int,
        line_timeout: float, deadline_s: float, folder: str | None) -> int:
    began = time.monotonic()
    deadline = began + deadline_s
    path = os.path.abspath(path)
    kit = read_kit(path)
    if kit["smoke"] != (config.gpu != "cuda"):
        raise KitError(f"the kit was built {'with' if kit['smoke'] else 'without'} --smoke; run it "
                       f"{'with' if kit['smoke'] else 'without'} --smoke")
    missing = "" if kit["smoke"] else device_missing("cuda", child_timeout=120)
    if missing:
        return no_device("bench", "cuda", why=missing, allow=config.allow_no_gpu, nothing="measured")
    unknown = [f for f in (fractions or []) if not any(abs(b["fraction"] - f) < 1e-9 for b in kit["budgets"])]
    if unknown:
        raise KitError(f"--budgets: the kit has no budget {', '.join(map(str, unknown))} (it has "
                       f"{', '.join(str(b['fraction']) for b in kit['budgets'])})")
    lines = plan_lines(kit, path, only, fractions)
    scratch = Scratch(kit, path, folder, new_tokens)
    try:
        return _run_lines(kit, lines, scratch, deadline, line_timeout, began)
    finally:
        scratch.done()


def _run_lines(kit: dict, lines: list[Line], scratch: Scratch, deadline: float, line_timeout: float,
               began: float) -> int:
    memory = not kit["smoke"]
    steps = weight_steps(kit, lines, scratch)
    prep_s = 0 if kit["smoke"] else sum(EXPECT_S[who] for who, _, _ in steps)
    print(f"generation under a GPU memory budget (issue 46 item 4): {kit['config']}, {scratch.new_tokens} new tokens "
          f"after a prompt of {kit['prompt_tokens']}; scratch {scratch.dir}; deadline "
          f"{deadline - time.monotonic():.0f} s, a line's timeout {line_timeout:.0f} s", flush=True)
    print(_plan_text(lines, prep_s), flush=True)
    why = prepare(kit, steps, scratch, deadline)
    if why:
        print(f"bench: error: the weights could not be made: {why}", file=sys.stderr)
        return 1
    prompt = _prompt(kit, scratch)
    skipped = []
    for k, line in enumerate(lines):
        left = deadline - time.monotonic()
        if left < 15:
            skipped.append(line)
            continue
        print(f"[{k + 1}/{len(lines)}] {line.key} ({line.label}) ...", flush=True)
        result = child(_spec(kit, line, scratch, prompt, memory), scratch, min(line_timeout, left))
        if "failed" not in result:
            result.update(check_ids(kit, line, scratch))
        scratch.record(line.key, result)
        print(f"[{k + 1}/{len(lines)}] {line.key}: " + (f"FAILED {result['failed']}" if "failed" in result else
              f"prefill {result['prefill_s'] * 1e3:.1f} ms, decode {_tokens_per_s(result, scratch):.1f} tokens/s, "
              f"ids {result['ids']} ({result['ids_note']}), {result['seconds']:.0f} s"), flush=True)
    if skipped:
        keys = ",".join(sorted({line.tool for line in skipped}))
        print(f"\nnot run before the deadline: {', '.join(line.key for line in skipped)}; run them with "
              f"--scratch {scratch.dir if scratch.keep else 'DIR'} --only {keys}", flush=True)
    every = plan_lines(kit, "", list(TOOLS), None)
    results = scratch.results()
    for line in every:  # checked again: a line run before its reference (--only, an earlier call) has one now
        if line.key in results and "failed" not in results[line.key]:
            results[line.key].update(check_ids(kit, line, scratch))
    right = table(kit, every, results, scratch.new_tokens)
    print(f"\nran for {time.monotonic() - began:.0f} s")
    return verdict(right) or (1 if skipped else 0)


def _tokens_per_s(result: dict, scratch: Scratch) -> float:
    n = scratch.new_tokens - 1
    return n / result["decode_s"] if result["decode_s"] > 0 else float("inf")
