"""Greedy text generation with a module that keeps its own KV cache:
``mdc.generate(module, prompt_ids, max_new_tokens)``.

The module is a loaded ``Module`` (``load``) with two functions, the
convention of docs/mdc-generate.md:

  @prefill(ids: tensor<1xNxi64>, length: tensor<1xi64>) -> tensor<1xVxf*>
      the prompt padded to N token ids and its length; fills the cache for
      positions 0..N-1 and returns the logits of position length-1;
  @decode(token: tensor<1x1xi64>, position: tensor<1xi64>) -> tensor<1xVxf*>
      one token at ``position``; stores its keys and values there and
      returns its logits.

(i32 in place of i64 too.) The cache lives in the module's state (mutable
globals), so the calls of one generation run in order on one module.

A module run by stock iree-run-module (native.py: a Vulkan device beside
another) runs each call in a process of its own, and its state does not
outlive a call. There mdc.generate calls ``@generate`` once instead, the
loop mdc-compile adds to a module whose functions follow the convention
(passes/transforms/generate_entry_point.py):

  @generate(ids: tensor<1xNxi64>, length: tensor<1xi64>, count: i64)
      -> (ids tensor<?xi64>, logits tensor<?xVxf*>)

which makes every id in one call, so prefill's time and decode's are not
told apart: the Generation holds the one call's time (``call_s``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .errors import ShimError

PREFILL, DECODE, GENERATE = "prefill", "decode", "generate"
CONVENTION = ("@prefill(ids: tensor<1xNxi64>, length: tensor<1xi64>) -> logits tensor<1xVxf32> and "
              "@decode(token: tensor<1x1xi64>, position: tensor<1xi64>) -> logits tensor<1xVxf32> "
              "(docs/mdc-generate.md)")
_INTS = {"i64": np.int64, "si64": np.int64, "i32": np.int32, "si32": np.int32}


@dataclass
class Generation:
    """What ``generate`` made: the new token ids and how long it took. Made
    by one call of ``@generate``, it has that call's time (``call_s``), its
    ``prefill_s`` and ``decode_s`` are None, and so are their tokens/s."""

    ids: np.ndarray  # the new token ids, int64, [max_new_tokens]
    prompt_tokens: int
    prefill_s: Optional[float]  # the prefill call and its argmax
    decode_s: Optional[float]  # all decode calls and their argmaxes
    logits: Optional[np.ndarray] = field(default=None, repr=False)  # [new, vocab] with keep_logits
    call_s: Optional[float] = None  # the one call of @generate that made every id

    @property
    def prefill_tokens_per_s(self) -> Optional[float]:
        if self.prefill_s is None:
            return None
        return self.prompt_tokens / self.prefill_s if self.prefill_s > 0 else float("inf")

    @property
    def decode_tokens_per_s(self) -> Optional[float]:
        if self.decode_s is None:
            return None
        n = len(self.ids) - 1  # the first new id comes from prefill
        return n / self.decode_s if self.decode_s > 0 else float("inf")

    def summary(self) -> str:
        """One line: prefill's time and tokens/s, decode's tokens/s; or the
        one call's time, where one call of @generate made every id."""
        if self.call_s is not None:
            n = len(self.ids)
            rate = f"{n / self.call_s:.1f}" if self.call_s > 0 else "inf"
            return (f"prefill and {n - 1} decode steps in one call of @generate: {n} new tokens after "
                    f"{self.prompt_tokens} in {self.call_s * 1e3:.2f} ms ({rate} new tokens/s, prefill included)")
        line = (f"prefill: {self.prompt_tokens} tokens in {self.prefill_s * 1e3:.2f} ms "
                f"({self.prefill_tokens_per_s:.1f} tokens/s)")
        if len(self.ids) > 1:
            line += (f"; decode: {len(self.ids) - 1} tokens in {self.decode_s * 1e3:.2f} ms "
                     f"({self.decode_tokens_per_s:.1f} tokens/s)")
        return line


@dataclass(frozen=True)
class EntryPoints:
    """A module's prefill and decode, checked against the convention."""

    prefill: Callable
    decode: Callable
    prompt_capacity: int  # N of prefill's [1, N] ids
    id_dtype: type  # the token ids' numpy dtype
    vocab: int
    generate: Optional[Callable] = None  # @generate, for a module whose calls keep no state


def _int_tensor(function, index: int, shape: tuple, what: str):
    sig = function.signature
    if len(sig.args) != 2 or len(sig.results) != 1:
        raise ShimError(f"@{sig.name} takes {len(sig.args)} argument(s) and returns {len(sig.results)} "
                        f"result(s); mdc.generate needs {CONVENTION}")
    t = sig.args[index].type
    ok = getattr(t, "element", None) in _INTS and len(t.shape) == len(shape) and all(
        want is None or got == want for want, got in zip(shape, t.shape))
    if not ok:
        raise ShimError(f"@{sig.name}'s {what} (argument {index}) is {t}; mdc.generate needs {CONVENTION}")
    return _INTS[t.element]


def entry_points(module) -> EntryPoints:
    """The module's ``prefill`` and ``decode``; a ShimError naming what is
    missing or mistyped when it does not follow the convention."""
    from .module import Module
    from .native import NativeModule

    if not isinstance(module, (Module, NativeModule)):
        raise ShimError(f"mdc.generate takes a loaded module (mdc.runtime_shim.load), got {type(module).__name__}")
    names = module.function_names
    missing = [n for n in (PREFILL, DECODE) if n not in names]
    if missing:
        raise ShimError(f"{module.path} has no function {' or '.join('@' + n for n in missing)} "
                        f"(it has {', '.join('@' + n for n in names) or 'none'}); mdc.generate needs {CONVENTION}")
    prefill, decode = module.function(PREFILL), module.function(DECODE)
    id_dtype = _int_tensor(prefill, 0, (1, None), "ids")
    _int_tensor(prefill, 1, (1,), "length")
    _int_tensor(decode, 0, (1, 1), "token")
    _int_tensor(decode, 1, (1,), "position")
    capacity = prefill.signature.args[0].type.shape[1]
    vocabs = []
    for f in (prefill, decode):
        r = f.signature.results[0].type
        if getattr(r, "element", "").lstrip("b").startswith("f") and len(r.shape) == 2 and r.shape[0] == 1:
            vocabs.append(r.shape[1])
        else:
            raise ShimError(f"@{f.name} returns {r}; mdc.generate needs {CONVENTION}")
    if capacity is None or vocabs[0] != vocabs[1]:
        raise ShimError(f"{module.path}: @prefill takes {prefill.signature.args[0].type} and returns "
                        f"{vocabs[0]} logits, @decode {vocabs[1]}; mdc.generate needs a static prompt "
                        f"length and one vocabulary: {CONVENTION}")
    loop = _generate_loop(module, prefill, vocabs[0]) if isinstance(module, NativeModule) else None
    return EntryPoints(prefill, decode, capacity, id_dtype, vocabs[0], loop)


def _generate_loop(module, prefill, vocab: int):
    """The module's ``@generate`` (the module docstring's), for a module
    each call of which is a process of its own; a ShimError where it has
    none, or one of another signature."""
    why = (f"{module.path} runs in iree-run-module ({module.reason}): each call is a process of its own, so "
           "the module's KV cache does not outlive a call, and mdc.generate calls its @generate instead, which "
           "mdc-compile adds to a module whose @prefill and @decode follow the convention")
    if GENERATE not in module.function_names:
        raise ShimError(f"{why}; this one has no @generate: compile it again with mdc-compile (without "
                        "--no-generate-entry-point)")
    loop = module.function(GENERATE)
    if not _fits(loop.signature, prefill.signature, vocab):
        sig = prefill.signature
        want = (f"({sig.args[0].type}, {sig.args[1].type}, i64) -> "
                f"(tensor<?x{sig.args[0].type.element}>, tensor<?x{vocab}x{sig.results[0].type.element}>)")
        got = (f"({', '.join(str(v.type) for v in loop.signature.args)}) -> "
               f"({', '.join(str(v.type) for v in loop.signature.results)})")
        raise ShimError(f"{why}; its @generate is {got}, not {want}")
    return loop


def _fits(sig, prefill_sig, vocab: int) -> bool:
    """Whether ``sig`` is @generate's for this @prefill: its ids and
    length, a count, and back ids of one integer type and [n, vocab]
    float logits."""
    a, r = sig.args, sig.results
    if len(a) != 3 or len(r) != 2 or a[2].type != "i64" or not all(v.is_tensor for v in (a[0], a[1], *r)):
        return False
    ids = prefill_sig.args[0].type
    shapes = (a[0].type.shape == ids.shape and a[1].type.shape == (1,) and r[0].type.shape == (None,)
              and r[1].type.shape == (None, vocab))
    ints = {_INTS.get(t.element) for t in (ids, a[0].type, a[1].type, r[0].type)}
    return shapes and len(ints) == 1 and None not in ints and r[1].type.element.lstrip("b").startswith("f")


def _prompt(prompt_ids, ep: EntryPoints) -> np.ndarray:
    p = np.asarray(prompt_ids)
    if p.ndim == 2 and p.shape[0] == 1:
        p = p[0]
    if p.ndim != 1 or not np.issubdtype(p.dtype, np.integer):
        raise ShimError(f"prompt_ids: expected one sequence of integer token ids, got {p.dtype} of shape "
                        f"{list(p.shape)}")
    if not 1 <= len(p) <= ep.prompt_capacity:
        raise ShimError(f"prompt_ids: {len(p)} tokens; @prefill takes 1 to {ep.prompt_capacity}")
    if p.min() < 0 or p.max() >= ep.vocab:
        raise ShimError(f"prompt_ids: token ids must lie in 0..{ep.vocab - 1} (the logits' size); "
                        f"got {p.min()}..{p.max()}")
    return p


def generate(module, prompt_ids, max_new_tokens: int, *, on_token: Optional[Callable[[int, int], None]] = None,
             keep_logits: bool = False) -> Generation:
    """Greedy decoding: ``max_new_tokens`` new ids after ``prompt_ids`` (a
    1-D integer array, or [1, n]), each the argmax (the first, on a tie) of
    the logits the module returns. ``on_token(i, id)`` is called after the
    i-th new id (from 0); ``keep_logits`` keeps every step's logits in the
    result. The caller keeps prompt and new tokens within the cache the
    module was made with (positions past it are the export's to refuse)."""
    ep = entry_points(module)
    p = _prompt(prompt_ids, ep)
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, (int, np.integer)) or max_new_tokens < 1:
        raise ShimError(f"max_new_tokens: expected a positive integer, got {max_new_tokens!r}")
    ids = np.zeros((1, ep.prompt_capacity), ep.id_dtype)
    ids[0, :len(p)] = p
    if ep.generate is not None:
        return _in_one_call(ep, ids, len(p), int(max_new_tokens), on_token, keep_logits)
    out, kept = np.zeros(max_new_tokens, np.int64), []
    began = time.perf_counter()
    logits = ep.prefill(ids, np.array([len(p)], ep.id_dtype))
    out[0] = int(np.argmax(logits[0]))
    prefill_s = time.perf_counter() - began
    decode_s = 0.0
    for i in range(max_new_tokens):
        if i:
            began = time.perf_counter()
            logits = ep.decode(np.array([[out[i - 1]]], ep.id_dtype), np.array([len(p) + i - 1], ep.id_dtype))
            out[i] = int(np.argmax(logits[0]))
            decode_s += time.perf_counter() - began
        if keep_logits:
            kept.append(np.array(logits[0], np.float32))
        if on_token is not None:
            on_token(i, int(out[i]))
    return Generation(out, len(p), prefill_s, decode_s, np.stack(kept) if keep_logits else None)


def _in_one_call(ep: EntryPoints, ids: np.ndarray, prompt: int, count: int, on_token, keep_logits: bool):
    """``generate`` by one call of ``@generate``: every id at once, then
    ``on_token`` for each."""
    began = time.perf_counter()
    out, logits = ep.generate(ids, np.array([prompt], ep.id_dtype), count)
    call_s = time.perf_counter() - began
    out = np.asarray(out).astype(np.int64)
    if on_token is not None:
        for i, token in enumerate(out):
            on_token(i, int(token))
    kept = np.asarray(logits, np.float32) if keep_logits else None
    return Generation(out, prompt, None, None, kept, call_s=call_s)


def first_divergence(ids, logits, ref_ids, ref_logits) -> Optional[dict]:
    """Where greedy ids ``ids`` first differ from a reference's ``ref_ids``
    (each with its [steps, vocab] logits), with both sides' logits of both
    ids there; None if they agree over the shorter of the two."""
    n = min(len(ids), len(ref_ids))
    differ = np.nonzero(np.asarray(ids[:n]) != np.asarray(ref_ids[:n]))[0]
    if not len(differ):
        return None
    i = int(differ[0])
    a, b = int(ids[i]), int(ref_ids[i])
    return {"step": i, "id": a, "ref_id": b,
            "logits": {a: float(logits[i][a]), b: float(logits[i][b])},
            "ref_logits": {a: float(ref_logits[i][a]), b: float(ref_logits[i][b])}}


def describe_divergence(d: Optional[dict], steps: int) -> str:
    """One line for ``first_divergence``'s answer."""
    if d is None:
        return f"the same {steps} ids"
    a, b = d["id"], d["ref_id"]
    return (f"first divergence at new token {d['step']}: {a} here (logits {a}: {d['logits'][a]:.6g}, "
            f"{b}: {d['logits'][b]:.6g}), {b} in the reference (logits {a}: {d['ref_logits'][a]:.6g}, "
            f"{b}: {d['ref_logits'][b]:.6g})")
