"""The Python API's words for the tools' flags: an error is written once,
naming mdc-compile's and mdc-opt's flags, and a ``CompileError`` raised to a
caller of ``compile()`` or ``run_passes()`` names the keyword arguments that
caller used instead (``--gpu-memory=lots`` reads ``gpu_memory='lots'``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

# The keyword of compile() (and run_passes()) that each mdc-compile/mdc-opt
# flag is: a CompileError's str() names the keyword the caller used, where
# the tools' render() names the flag. A flag that is a list's entry
# (--device, --link, --max-dim) is that list's entry; a switch is the
# keyword's value that turns it on. The errors are written once, naming
# flags; keyword_spelling rewrites them.
FLAG_KEYWORDS = {
    "--device": "devices", "--link": "links", "--max-dim": "max_dims",
    "--staging": "staging", "--staging-pieces": "staging_pieces", "--compile-to": "compile_to",
    "--dump-stages": "dump_stages", "--place": "place", "--gpu-memory": "gpu_memory",
    "--place-profile": "place_profile", "--place-objective": "place_objective",
    "--place-costs": "place_costs",
    "--pinned-arguments": "pinned_arguments=True", "--no-manifest": "manifest=False",
    "--no-host-entry-points": "host_entry_points=False",
    "--no-result-storage-twins": "result_storage_twins=False",
    "--no-generate-entry-point": "generate_entry_point=False",
    "--no-cuda-matmul-configs": "cuda_matmul_configs=False",
    "--cuda-matmul-table": "cuda_matmul_table",
    "--no-cpu-data-tiling": "cpu_data_tiling=False",
}
LIST_KEYWORDS = ("devices", "links", "max_dims")
# A flag, and its value up to a space, ',' or ';', or a ':' or '.' that ends
# a clause (before a space or the text's end: "--gpu-memory=1000." is 1000,
# then a full stop); a value of dots alone ("--dump-stages=.") is a folder.
_FLAG = re.compile(r"(?<![\w-])(%s)(?![\w-])(?:=(\.+(?=\s|$)|(?:[^\s,;:().]|[.:](?!\s|$)|\([^\s()]*\))*))?"
                   % "|".join(re.escape(f) for f in sorted(FLAG_KEYWORDS, key=len, reverse=True)))
_PLAIN_VALUE = re.compile(r"^(?:\d+(?:\.\d+)?|True|False|None)$")


def keyword_spelling(text: str, given: Mapping | None = None) -> str:
    """``text`` (an error naming mdc-compile's flags) as the Python API's
    caller reads it: ``--gpu-memory=lots`` as ``gpu_memory='lots'``,
    ``--device=a=gpu[0]`` as ``devices entry 'a=gpu[0]'``, ``--no-manifest``
    as ``manifest=False``. ``given`` (keyword -> the caller's value) says
    where a value the caller gave ends (``--gpu-memory=8 parsecs``) and
    how it was written (``gpu_memory=32``, an int, not ``'32'``). Other
    flags (``--iree-*``, given as they are in ``iree_flags``) stay."""
    given = dict(given or {})
    known = {}  # flag -> {the value's text in the error: its Python spelling}
    for flag, name in FLAG_KEYWORDS.items():
        value = given.get(name)
        if value is None or "=" in name:
            continue
        if name in LIST_KEYWORDS:
            entries = [f"{k}={v}" for k, v in value.items()] if isinstance(value, Mapping) else list(value)
            known[flag] = {str(e): repr(str(e)) for e in entries}
        else:
            known[flag] = {str(value): repr(value)}

    out, at = [], 0
    while (m := _FLAG.search(text, at)) is not None:
        flag, value, end = m.group(1), m.group(2), m.end()
        name = FLAG_KEYWORDS[flag]
        if value is not None:
            # The caller's own value where the error quotes it (the longest
            # that fits, no shorter than what the pattern took: it may hold
            # spaces), else what the pattern took.
            after = text[m.start(2):]
            exact = max((v for v in known.get(flag, {}) if after.startswith(v) and len(v) >= len(value)),
                        key=len, default=None)
            if exact is not None:
                value, end, spelled = exact, m.start(2) + len(exact), known[flag][exact]
            else:
                spelled = value if _PLAIN_VALUE.match(value) else repr(value)
        if name in LIST_KEYWORDS:
            replaced = f"{name} entry" + ("" if value is None else f" {spelled}")
        elif value is None or "=" in name:
            replaced = name
        else:
            replaced = f"{name}={spelled}"
        out += [text[at:m.start()], replaced]
        at = end
    out.append(text[at:])
    return "".join(out)
