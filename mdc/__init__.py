"""mdc: IREE programs that span a CPU and a discrete GPU, on stock IREE.

Installed, the project's packages live under this one name, so that they
cannot collide with another ``passes`` or ``pipeline`` in the same
environment::

    from mdc.runtime_shim import load      # run an mdc-compiled .vmfb
    mdc.generate(module, prompt_ids, n)    # greedy generation (runtime_shim/generate.py)
    mdc.pipeline                           # mdc-compile and mdc-opt
    mdc.passes                             # the stream-IR rewrites
    mdc.contract                           # what compiler and runtime share

In the source tree they stay top-level folders (passes/, pipeline/,
runtime_shim/, contract/); pyproject.toml's ``package-dir`` maps them under
``mdc`` when installed. With the checkout itself on ``sys.path`` (the lit
configuration and the GPU scripts run it that way) this folder holds only
this file, and the subpackages are found in the folder above it.
"""
import os as _os

_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "runtime_shim")):
    __path__.append(_checkout)  # noqa: F821 (a package's own __path__)


def __getattr__(name):
    """``mdc.generate``, imported when first asked for: ``import mdc`` alone
    loads no runtime."""
    if name == "generate":
        from mdc.runtime_shim.generate import generate

        return generate
    raise AttributeError(f"module 'mdc' has no attribute {name!r}")
