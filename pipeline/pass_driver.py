"""``mdc.pipeline.run_passes``: mdc's registered passes on one module's IR
(input-, stream- or HAL-level), what ``mdc-opt`` runs on each input.

    from mdc.pipeline import run_passes
    out = run_passes(text, ["stage-crossings"], links=["a:b=staged"])
    print(out.text)

The devices are the module's own (its device globals or, at the HAL level,
their initializers); ``devices`` adds those it names but does not declare,
as ``mdc-compile --device`` takes them. Failures are raised as
driver.CompileError, as ``compile`` raises them.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping, Sequence

from mdc.passes.infra.diagnostics import MdcError, format_location

from . import options, placement_options
from .driver import CompileWarning, as_compile_error
from .options import UsageError


@dataclasses.dataclass
class PassesResult:
    text: str  # the module after the passes
    warnings: list[CompileWarning]
    placement: dict | None = None  # what assign-devices decided (--place), else None


def lookup_passes(names: Sequence[str]) -> list:
    """The registered pass classes named, in order (UsageError for a name
    no pass has)."""
    from mdc.passes.infra import registry

    passes = []
    for name in names:
        cls = registry.lookup(name)
        if cls is None:
            known = ", ".join(p.name for p in registry.all_passes())
            raise UsageError(f"unknown pass '{name}'", notes=[f"registered passes: {known}"])
        passes.append(cls)
    return passes


def run_passes(text: str, passes: Sequence, *, name: str = "<stdin>",
               devices: Mapping[str, str] | Sequence[str] = (), links: Sequence[str] = (),
               staging: str = "emplace", staging_pieces: int | None = None,
               pinned_arguments: bool = False, place: str = "manual", gpu_memory: int | str | None = None,
               place_profile: str | None = None, place_objective: str = "latency", place_costs: str | None = None,
               max_dims: Mapping[str, int] | Sequence[str] = (),
               cuda_matmul_table: str | None = None) -> PassesResult:
    """Runs ``passes`` (names or registered pass classes) on the module
    ``text`` (``name`` stands for its file in locations) and verifies it.
    ``place`` ... ``max_dims``: assign-devices' options, and
    ``cuda_matmul_table`` cuda-matmul-configs' table, as
    ``mdc.pipeline.compile`` takes them."""
    try:
        placement = placement_options.placement_settings(types.SimpleNamespace(
            place=place, gpu_memory=gpu_memory, place_profile=place_profile, place_objective=place_objective,
            max_dims=max_dims, place_costs=place_costs))
        placement_options.check_placement(list(devices), **placement)
        options.check_cuda_matmul_table(cuda_matmul_table)
        return _run(text, name, passes, devices, links, staging, staging_pieces, pinned_arguments,
                    dict(placement, cuda_matmul_table=cuda_matmul_table))
    except Exception as e:
        error = as_compile_error(e, given=dict(
            devices=devices, links=links, staging=staging, staging_pieces=staging_pieces, place=place,
            gpu_memory=gpu_memory, place_profile=place_profile, place_objective=place_objective, max_dims=max_dims,
            place_costs=place_costs,
            cuda_matmul_table=cuda_matmul_table))
        if error is None:
            raise
        raise error from e


def _run(text, name, passes, devices, links, staging, staging_pieces, pinned_arguments, more) -> PassesResult:
    from mdc.passes.infra import registry

    from .ireec import Compiler, module_text

    passes = [lookup_passes([p])[0] if isinstance(p, str) else p for p in passes]
    compiler = Compiler([])
    module = compiler.parse_text(text, name)
    _check_one_module(module)
    known = _module_devices(module, devices)
    link_overrides = options.resolve_link_names([options.parse_link(link) for link in links],
                                                list(known.values()))
    settings = registry.CompileSettings(links=link_overrides, staging=staging, staging_pieces=staging_pieces,
                                        pinned_arguments=pinned_arguments, devices=known, **more)
    report = registry.Report()
    with compiler.context, module.location:
        # One manager for the whole list, as a compile's level runs its
        # passes: an analysis a pass preserves reaches the next one.
        registry.run_passes(passes, module, settings, report)
        try:
            module.verify()
        except Exception as e:
            raise MdcError(f"passes produced invalid IR: {e}") from None
    return PassesResult(module_text(module), [CompileWarning(loc, message) for loc, message in report.warnings],
                        report.placement)


def _check_one_module(module) -> None:
    from mdc.passes.ir.ir_util import top_level_ops

    nested = [op for op in top_level_ops(module) if op.name == "builtin.module"]
    if len(nested) > 1:
        raise MdcError(
            f"the input holds {len(nested)} modules; mdc's passes work on one module with its own devices",
            location=format_location(nested[1].location),
            notes=["separate the modules with '// -----' lines and pass --split-input-file"],
        )


def _module_devices(module, devices) -> dict:
    """The module's devices by name: those it declares (stream-level IR
    declares them by initial value; at the HAL level their initializers
    say what they are), then those ``devices`` adds."""
    from mdc.passes.ir.module_facts import declared_devices, hal_devices, referenced_devices

    known = dict(declared_devices(module) or hal_devices(module))
    flags = [f"{n}={s}" for n, s in devices.items()] if isinstance(devices, Mapping) else list(devices)
    given, _ = options.resolve_names([options.parse_device(flag) for flag in flags], referenced_devices(module))
    for d in given:
        known.setdefault(d.name, d)
    return known


__all__ = ["PassesResult", "lookup_passes", "run_passes"]
