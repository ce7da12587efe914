"""Export examples/pytorch/exported_wide/gpt2_wide.mlir: transformer_models.gpt2_wide()
with its weights as named parameters (scope ``model``) and no device named,
one function ``main`` of token ids [1, WIDE_TOKENS] (int64) to logits.

    python examples/pytorch/export_wide.py [--out DIR]   # in the export environment (README.md)

Only the MLIR is written: test/e2e/gpu_place_wide.py makes the weights from
a seed where it runs, and checks against stock IREE on local-task.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(HERE, "exported_wide"), help="the folder to write gpt2_wide.mlir in")
    args = p.parse_args(argv)
    sys.path.insert(0, HERE)
    import torch
    from iree.turbine import aot

    import transformer_models as tm

    torch.manual_seed(0)  # the weights are not exported; the seed only makes the run repeatable
    model = tm.gpt2_wide().eval()
    ids = torch.zeros((1, tm.WIDE_TOKENS), dtype=torch.int64)
    aot.externalize_module_parameters(model, external_scope="model")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        exported = aot.export(model, args=(ids,), module_name="gpt2_wide", function_name="main")
    os.makedirs(args.out, exist_ok=True)
    exported.save_mlir(os.path.join(args.out, "gpt2_wide.mlir"))
    print(f"wrote {os.path.join(args.out, 'gpt2_wide.mlir')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
