#!/usr/bin/env python3
"""Exports the models of models.py to MLIR with iree-turbine, with inputs
and torch's reference outputs, for mdc's tests to use without torch.

Run it in the export environment (README.md: torch 2.13 CPU, iree-turbine
3.9.0, iree-base-compiler 3.9.0, transformers), not in mdc's venv. It
writes two folders beside this script: exported/ (models.EXAMPLES, placed
by hand on two devices; --out) and exported_unplaced/ (models.UNPLACED, no
device named; --out-unplaced). For each model NAME it writes into its folder:

  NAME.mlir           torch-dialect IR from iree.turbine.aot.export
  NAME.irpa           the weights, for a model exported with external
                      parameters (models.Example.parameter_scope)
  NAME.inputK.npy     the K-th argument
  NAME.outputK.npy    torch's K-th result for those arguments
  NAME.sizeS.inputK.npy, NAME.sizeS.outputK.npy
                      the same at size S of a dynamic dimension (models.py's
                      other_sizes), for checking the program at sizes other
                      than the one it was exported at
  index.json          per model: function, argument devices, files

Every file is rewritten only if its bytes change, and a second run writes
the same bytes. --check exports into a temporary folder and compares it
with the output folder instead (exit 1 if anything differs): the MLIR,
index.json, the inputs and integer outputs byte for byte, torch's float
outputs within rtol=1e-5, atol=1e-6 (OUTPUT_RTOL, OUTPUT_ATOL), since
torch's CPU kernels sum in another order on another CPU.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import sys
import tempfile
from typing import NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("split_mlp", "embed_head", "dynamic_batch")  # exported/: models.EXAMPLES
UNPLACED_NAMES = (*NAMES, "gpt2", "llama")  # exported_unplaced/: models.UNPLACED
FUNCTION = "main"  # the exported function's name, in module @NAME

# --check's tolerance for torch's float outputs: the one test_pytorch_exports.py
# holds mdc's results to against them, so a reference that moves within it
# (another CPU, another summation order) changes nothing a test can see.
OUTPUT_RTOL = 1e-5
OUTPUT_ATOL = 1e-6

ENV_HELP = (
    "export.py needs the export environment, not mdc's venv: torch 2.13 (CPU), "
    "iree-turbine==3.9.0, iree-base-compiler==3.9.0, iree-base-runtime==3.9.0 and "
    "transformers==5.25.0 (examples/pytorch/README.md says how to make it). "
)


class Folder(NamedTuple):
    """One output folder: the models of one table of models.py."""

    path: str  # where the files go
    names: tuple[str, ...]  # its models, in index.json's order
    table: str  # the models.py dict they come from: "EXAMPLES" or "UNPLACED"


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Export the example PyTorch models (models.py) to MLIR with iree-turbine, "
                    "with deterministic inputs and torch's reference outputs as .npy files. "
                    "Needs the export environment of README.md (torch, iree-turbine 3.9.0).")
    p.add_argument("--out", default=os.path.join(HERE, "exported"),
                   help="output folder (default: exported/ beside export.py)")
    p.add_argument("--out-unplaced", default=os.path.join(HERE, "exported_unplaced"),
                   help="output folder of the unplaced exports (default: exported_unplaced/ beside export.py)")
    p.add_argument("--only", action="append", choices=UNPLACED_NAMES, metavar="NAME",
                   help="export only NAME, in every folder that has it (repeatable; one of "
                        f"{', '.join(UNPLACED_NAMES)})")
    p.add_argument("--check", action="store_true",
                   help="export into a temporary folder and compare with the output folders (torch's float outputs "
                        f"within rtol={OUTPUT_RTOL:g}, atol={OUTPUT_ATOL:g}, every other file byte for "
                        "byte); exit 1 on any difference")
    return p.parse_args(argv)


def import_env():
    """The export environment's modules, or a clear message and exit 1."""
    try:
        import numpy as np
        import torch
        sys.path.insert(0, HERE)
        import turbine_compat  # noqa: F401  (restores what iree-base-compiler 3.13 dropped)
        from iree.turbine import aot
        import models
    except ImportError as e:
        print(f"error: {ENV_HELP}Missing: {e.name or e}.", file=sys.stderr)
        sys.exit(1)
    return np, torch, aot, models


def _replace_if_changed(tmp: str, dest: str) -> None:
    if os.path.exists(dest) and filecmp.cmp(tmp, dest, shallow=False):
        os.unlink(tmp)
    else:
        os.replace(tmp, dest)


def write_npy(np, path: str, array) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.save(f, np.ascontiguousarray(array), allow_pickle=False)
    _replace_if_changed(tmp, path)


def export_one(np, torch, aot, models, name: str, out: str, table: str = "EXAMPLES") -> dict:
    import warnings

    examples = getattr(models, table)
    example = examples[name]
    model = models.build(name, examples)
    inputs = models.example_inputs(name, examples)
    args = tuple(torch.from_numpy(a.copy()) for a in inputs)
    shapes = example.dynamic_shapes
    with torch.no_grad():
        result = model(*args)
    results = result if isinstance(result, (tuple, list)) else (result,)
    entry = {"mlir": f"{name}.mlir", "module": name, "function": FUNCTION, "inputs": [], "outputs": []}
    if example.parameter_scope is not None:
        # every weight becomes #flow.parameter.named<SCOPE::NAME>, its bytes in NAME.irpa
        aot.externalize_module_parameters(model, external_scope=example.parameter_scope)
        tmp = os.path.join(out, f".{name}.tmp.irpa")
        aot.save_module_parameters(tmp, model)
        _replace_if_changed(tmp, os.path.join(out, f"{name}.irpa"))
        entry["parameters"] = {"file": f"{name}.irpa", "scope": example.parameter_scope}
    with warnings.catch_warnings():
        # torch.export's pytree deprecation notes and dynamo's note on
        # transformers' output capturing, nothing about this export
        warnings.simplefilter("ignore", FutureWarning)
        warnings.filterwarnings("ignore", "While compiling, we found certain side effects", UserWarning)
        exported = aot.export(model, args=args, arg_device=models.arg_device(name, examples),
                              dynamic_shapes=shapes() if shapes else None,
                              module_name=name, function_name=FUNCTION)
    exported.verify()
    mlir = os.path.join(out, f"{name}.mlir")
    tmp = os.path.join(out, f".{name}.tmp.mlir")
    exported.save_mlir(tmp)
    _replace_if_changed(tmp, mlir)
    for k, a in enumerate(inputs):
        write_npy(np, os.path.join(out, f"{name}.input{k}.npy"), a)
        dev = example.arg_device.get(k)
        entry["inputs"].append({"file": f"{name}.input{k}.npy", "dtype": str(a.dtype), "shape": list(a.shape),
                                "device": None if dev is None else f"__device_{dev}"})
    for k, r in enumerate(results):
        a = r.detach().numpy()
        write_npy(np, os.path.join(out, f"{name}.output{k}.npy"), a)
        entry["outputs"].append({"file": f"{name}.output{k}.npy", "dtype": str(a.dtype), "shape": list(a.shape)})
    if shapes:
        entry["dynamic"] = "dimension 0 of every argument (one Dim, 1..4096)"
    for size in example.other_sizes:
        entry.setdefault("other_sizes", []).append(export_size(np, torch, models, model, name, size, out,
                                                               examples))
    return entry


def export_size(np, torch, models, model, name: str, size: int, out: str, examples: dict) -> dict:
    """Inputs at ``size`` of the dynamic dimension and torch's outputs for
    them, written beside the export; their index entry."""
    inputs = models.sized_inputs(name, size, examples)
    with torch.no_grad():
        result = model(*(torch.from_numpy(a.copy()) for a in inputs))
    results = result if isinstance(result, (tuple, list)) else (result,)
    entry = {"size": size, "inputs": [], "outputs": []}
    for kind, arrays in (("input", inputs), ("output", [r.detach().numpy() for r in results])):
        for k, a in enumerate(arrays):
            file = f"{name}.size{size}.{kind}{k}.npy"
            write_npy(np, os.path.join(out, file), a)
            entry[f"{kind}s"].append({"file": file, "dtype": str(a.dtype), "shape": list(a.shape)})
    return entry


def export_all(names, out: str, folder_names=NAMES, table: str = "EXAMPLES") -> None:
    """Exports ``names`` of ``models.<table>`` into ``out``; its index.json
    keeps the other models' entries, in ``folder_names``' order."""
    np, torch, aot, models = import_env()
    torch.set_num_threads(1)  # one summation order for the reference outputs
    os.makedirs(out, exist_ok=True)
    index_path = os.path.join(out, "index.json")
    index = {}
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)
    for name in names:
        index[name] = export_one(np, torch, aot, models, name, out, table)
        print(f"exported {name} into {os.path.basename(out)}/")
    index = {n: index[n] for n in folder_names if n in index}
    tmp = index_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(index, f, indent=2, sort_keys=True)
        f.write("\n")
    _replace_if_changed(tmp, index_path)


def same_export_file(new: str, old: str, *, rtol: float = OUTPUT_RTOL, atol: float = OUTPUT_ATOL) -> bool:
    """Whether the freshly exported file ``new`` matches the committed ``old``:
    a float ``*.outputK.npy`` (torch's result) of the same dtype and shape
    within ``rtol``/``atol`` (NaN equal to NaN); every other file (MLIR,
    index.json, inputs, integer outputs) byte for byte."""
    if not os.path.exists(old):
        return False
    if filecmp.cmp(new, old, shallow=False):
        return True
    if not _is_output_npy(os.path.basename(new)):
        return False
    import numpy as np
    try:
        a, b = np.load(new, allow_pickle=False), np.load(old, allow_pickle=False)
    except ValueError:
        return False
    return (a.dtype == b.dtype and a.shape == b.shape and np.issubdtype(a.dtype, np.floating)
            and bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)))


def _is_output_npy(file: str) -> bool:
    stem, ext = os.path.splitext(file)
    return ext == ".npy" and stem.rsplit(".", 1)[-1].startswith("output")


def differing_files(new_dir: str, old_dir: str) -> list[str]:
    """The files of ``new_dir`` that ``old_dir`` lacks or holds otherwise
    (``same_export_file``), sorted."""
    return [f for f in sorted(os.listdir(new_dir))
            if not same_export_file(os.path.join(new_dir, f), os.path.join(old_dir, f))]


def check_folder(names, folder: Folder) -> list[str]:
    """The files of ``folder`` that exporting ``names`` again would change
    (paths), exporting into a temporary folder."""
    out = folder.path
    with tempfile.TemporaryDirectory() as tmp:
        if os.path.exists(os.path.join(out, "index.json")):
            # start from the committed index so --only compares like for like
            with open(os.path.join(out, "index.json")) as f, open(os.path.join(tmp, "index.json"), "w") as g:
                g.write(f.read())
        export_all(names, tmp, folder.names, folder.table)
        return [os.path.join(out, f) for f in differing_files(tmp, out)]


def folders(args) -> list[Folder]:
    return [Folder(args.out, NAMES, "EXAMPLES"), Folder(args.out_unplaced, UNPLACED_NAMES, "UNPLACED")]


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    differ = []
    for folder in folders(args):
        names = [n for n in (args.only or folder.names) if n in folder.names]
        if not names:
            continue
        if args.check:
            differ += check_folder(names, folder)
        else:
            export_all(names, folder.path, folder.names, folder.table)
    if not args.check:
        return 0
    for path in differ:
        print(f"differs: {path}", file=sys.stderr)
    print("identical" if not differ else f"{len(differ)} file(s) differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
