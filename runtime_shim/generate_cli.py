"""mdc-generate: greedy generation with a prefill/decode module.

    mdc-generate llama.vmfb --parameters=model=llama.irpa --prompt-ids=1,2,3 \\
        --max-new-tokens=32 --device=local-task

Loads the module as mdc-run does (``--device`` URIs, ``--parameters``),
runs ``mdc.generate`` (generate.py; the entry points of
docs/mdc-generate.md), draws a progress bar on stderr, and prints the new
token ids on one line, then prefill's time and tokens/s and decode's
tokens/s. Every user error is one line, ``mdc-generate: error: ...``, exit
status 2; a failure inside the runtime is one line with exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

import numpy as np

from .errors import ShimError, short

PROG = "mdc-generate"
BAR = 30  # the progress bar's width in characters


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage block
        raise ShimError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, allow_abbrev=False,
                description="Greedy text generation with an mdc-compiled module that has @prefill and "
                "@decode (docs/mdc-generate.md).")
    p.add_argument("module", help="the .vmfb")
    p.add_argument("--device", action="append", default=[],
                   help="runtime device URI, repeated, as mdc-run takes it (default: local-task)")
    p.add_argument("--parameters", action="append", default=[], metavar="[SCOPE=]FILE",
                   help="parameter archive for the module's parameters (model=weights.irpa)")
    p.add_argument("--prompt-ids", required=True, metavar="IDS",
                   help="the prompt's token ids: 1,2,3 or @prompt.npy (a 1-D integer array)")
    p.add_argument("--max-new-tokens", type=_positive, default=32, metavar="N",
                   help="how many new ids to make (default 32)")
    p.add_argument("--output", metavar="@FILE.npy", help="also write the new ids (int64) to FILE.npy")
    p.add_argument("--no-progress", action="store_true", help="draw no progress bar")
    return p


def _positive(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def prompt_ids(text: str) -> np.ndarray:
    """--prompt-ids: ``1,2,3`` or ``@file.npy``."""
    if text.startswith("@"):
        path = text[1:]
        if not os.path.isfile(path):
            raise ShimError(f"--prompt-ids: no such file: {path}")
        try:
            return np.load(path, allow_pickle=False)
        except (ValueError, OSError) as e:
            raise ShimError(f"--prompt-ids: {path} is not a .npy array ({short(e, 120)})") from None
    try:
        return np.array([int(t, 10) for t in text.replace(" ", "").split(",")], np.int64)
    except ValueError:
        raise ShimError(f"--prompt-ids: expected token ids such as 1,2,3 or @prompt.npy, got {text!r}") from None


class Progress:
    """``[#####.....] 12/64 tokens`` on stderr, redrawn in place."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.stream = total, stream

    def __call__(self, i: int, token: int) -> None:
        done = i + 1
        filled = BAR * done // self.total
        self.stream.write(f"\r[{'#' * filled}{'.' * (BAR - filled)}] {done}/{self.total} tokens")
        if done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def _output_path(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    if not text.startswith("@") or not text.endswith(".npy"):
        raise ShimError(f"--output: expected @FILE.npy, got {text!r}")
    folder = os.path.dirname(os.path.abspath(text[1:]))
    if not os.path.isdir(folder):
        raise ShimError(f"--output: no such folder: {folder}")
    return text[1:]


def main(argv: Optional[Sequence[str]] = None) -> int:
    from .generate import generate
    from .module import load

    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
        if not os.path.isfile(args.module):
            raise ShimError(f"no such module file: {args.module}")
        prompt = prompt_ids(args.prompt_ids)
        out = _output_path(args.output)
        with load(args.module, args.device or ["local-task"], parameters=args.parameters) as m:
            progress = None if args.no_progress else Progress(args.max_new_tokens)
            result = generate(m, prompt, args.max_new_tokens, on_token=progress)
    except ShimError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # inside IREE's runtime: one line, not a traceback
        print(f"{PROG}: error: {short(e)}", file=sys.stderr)
        return 1
    print(" ".join(str(int(t)) for t in result.ids))
    print(result.summary())
    if out is not None:
        np.save(out, result.ids)
    return 0


def console_main() -> None:
    sys.exit(main())


if __name__ == "__main__":
    console_main()
