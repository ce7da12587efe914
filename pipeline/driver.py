"""The compile driver: ``mdc.pipeline.compile``, the Python twin of
``mdc.runtime_shim.load``, and what ``mdc-compile`` runs.

    from mdc.pipeline import compile
    result = compile("model.mlir", devices={"a": "local[0]", "b": "cuda[0]"})
    result.save("model.vmfb")

``source`` is the path of an MLIR file (a ``str`` or ``os.PathLike``: the
vmfb's locations name it, as iree-compile's do), or :class:`MlirText` for a
program held in memory. ``devices`` maps each device name to its spec, or
lists ``NAME=SPEC`` strings, as ``mdc-compile --device`` takes them. The
other options are :class:`CompileOptions`' fields, one per command-line flag.

The program is parsed once, in the session that compiles it: its device
names are resolved against it, the session's IREE flags set from them (IREE
reads a session's flags when a step runs, not when it parses; which
plugins it activates at the parse is no session flag), and the stages run
on it. A failure is raised as :class:`CompileError`, whose ``str()`` is one
line, with the exit status a tool gives it. A bug in mdc is raised as it is.

Two retries. Where data tiling is mdc's own default (options.cpu_code_flags)
and IREE fails on the program (3.13 has bugs only data tiling meets:
regress/iree_data_tiling_dynamic_matmul.test) or mdc finds a packed crossing
(passes/analysis/crossings.py), the driver compiles it again without data
tiling and warns; when that fails too, its error is raised. A stock IREE 3.13
limitation rejects some result-storage twins (an ``scf.for`` whose result is
written into an output argument: regress/iree_loop_output_argument.test):
when a compile that added twins fails, the driver compiles a copy of the
parsed module again without them and warns; when that fails too, the first
error is raised. Neither retry searches for a placement again: the first
try's (``CompileSettings.place_decided``) comes before all either changes.

Nothing here loads IREE's compiler until a compile starts.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Callable

from mdc.contract.atomic_write import CannotWrite, write_atomically
from mdc.contract.manifest_record import Device
from mdc.passes.infra.diagnostics import MdcError

from . import cli_errors, options, placement_options
from .keyword_spelling import keyword_spelling
from .paths import check_input, same_file
from .program_devices import resolve_devices
from .options import UsageError

if TYPE_CHECKING:  # no IREE at import
    from mdc.passes.infra.outputs import Report
    from .module_record import ModuleRecord

NO_PUBLIC_FUNCTION = "the program has no public function"
DATA_TILING_DROPPED = "compiled without data tiling"  # how both warnings of that retry begin
MLIR_TIMING = "--mlir-timing"
REPORT_ENDINGS = (".json", ".md", ".svg", ".dot")


@dataclasses.dataclass(frozen=True)
class MlirText:
    """A program as MLIR text; ``name`` stands for its file in locations."""

    text: str
    name: str = "<mlir>"


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """mdc-compile's flags, typed (``mdc-compile --help`` says what each does)."""

    links: Sequence[str] = ()  # --link=X:Y=staged|shared
    staging: str = "emplace"  # --staging
    staging_pieces: int | None = None  # --staging-pieces
    pinned_arguments: bool = False  # --pinned-arguments
    manifest: bool = True  # not --no-manifest
    host_entry_points: bool = True  # not --no-host-entry-points
    result_storage_twins: bool = True  # not --no-result-storage-twins
    generate_entry_point: bool = True  # not --no-generate-entry-point
    cuda_matmul_configs: bool = True  # not --no-cuda-matmul-configs
    cuda_matmul_table: str | None = None  # --cuda-matmul-table: the table's path (None: the shipped one)
    cpu_data_tiling: bool = True  # not --no-cpu-data-tiling
    compile_to: str | None = None  # --compile-to: the IR after this stage
    iree_flags: Sequence[str] = ()  # --iree-* flags, passed to IREE unchanged
    # MLIR's own flags (--mlir-timing, ...): IREE reads them from its global
    # command line, which can be set once per process, before any compile.
    mlir_flags: Sequence[str] = ()
    dump_stages: str | None = None  # --dump-stages: the IR after every stage into this folder
    place: str = "manual"  # --place: manual, auto or an assignment file's path
    gpu_memory: int | str | None = None  # --gpu-memory: bytes, a size such as "8GiB", "auto" or "auto-512MiB"
    place_profile: str | None = None  # --place-profile: a machine profile's path
    place_objective: str = "latency"  # --place-objective: latency or throughput
    place_costs: str | None = None  # --place-costs: mdc-profile --program's costs file
    max_dims: Mapping[str, int] | Sequence[str] = ()  # --max-dim: {name: bound} or ["NAME=N", ...]

    def check(self) -> None:
        """The options make sense together (no IREE needed)."""
        if self.staging not in ("copy", "emplace"):
            raise UsageError(f"staging={self.staging!r}: expected 'copy' or 'emplace'")
        if self.staging_pieces is not None and not 1 <= self.staging_pieces <= 64:
            raise UsageError(f"staging_pieces={self.staging_pieces}: expected a whole number from 1 to 64")
        if self.compile_to is not None and self.compile_to not in options.STAGE_NAMES:
            raise UsageError(f"compile_to={self.compile_to!r}: expected one of {', '.join(options.STAGE_NAMES)}")
        if self.pinned_arguments and not self.manifest:
            raise UsageError("--pinned-arguments needs the manifest: it is how the runtime learns which "
                             "arguments to place in pinned memory", notes=["drop --no-manifest"])
        options.check_cuda_matmul_table(self.cuda_matmul_table)


@dataclasses.dataclass(frozen=True)
class CompileWarning:
    """One warning: a known stock IREE bug the program meets, a device it never names, a retry."""

    location: str | None  # file:line:col, the source file, or None
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class CompileError(Exception):
    """A compile that failed for the caller's or the program's reason.
    ``str()`` is one line (with the source location where there is one),
    naming the keyword arguments of ``compile``, not the tools' flags;
    ``exit_code`` is the status a tool exits with (2 for a mistake in the
    options, 1 for a program that does not compile); ``warnings`` and
    ``timings`` are what the compile found before it failed; ``render``
    writes it in full, as the tools print it."""

    def __init__(self, cause: Exception, exit_code: int, warnings=(), timings=(), given: Mapping | None = None):
        super().__init__(keyword_spelling(_one_line(cause), given))
        self.cause, self.exit_code = cause, exit_code
        self.warnings, self.timings = list(warnings), list(timings)

    def render(self, tool: str, verbose: bool = False) -> str:
        if isinstance(self.cause, MdcError):
            return self.cause.render(tool)
        if self.exit_code == cli_errors.USAGE_STATUS:  # a flag IREE does not take
            return f"{tool}: error: {self.cause.what}"
        return cli_errors.render_iree_error(tool, self.cause, verbose)


def _one_line(error: Exception) -> str:
    if isinstance(error, MdcError):
        return (f"{error.location}: " if error.location else "") + (error.message.splitlines() or [""])[0]
    first = next((d.message for d in getattr(error, "diagnostics", ()) if d.severity == "error"), None)
    if first is not None:
        return (first.splitlines() or [""])[0]
    return " ".join(line.strip() for line in getattr(error, "what", str(error)).splitlines())


def as_compile_error(error: Exception, warnings=(), timings=(), given: Mapping | None = None) -> CompileError | None:
    """``error`` as a CompileError, or None for a bug in mdc; ``given``: the caller's keywords (keyword_spelling)."""
    flag_errors, compile_errors = cli_errors.iree_error_types()
    if isinstance(error, UsageError) or isinstance(error, flag_errors):
        status = cli_errors.USAGE_STATUS
    elif isinstance(error, MdcError) or isinstance(error, compile_errors):
        status = cli_errors.FAILURE_STATUS
    else:
        return None
    return CompileError(error, status, warnings, timings, given)


@dataclasses.dataclass
class CompileResult:
    """What a compile made: ``vmfb`` (bytes) or, with ``compile_to``,
    ``text`` (the module's IR); ``report`` (what mdc's passes found:
    placed ops, crossings, twins) and ``record`` (what the stages read off
    the program, module_record.py), both None when ``compile_to`` stopped
    before the mdc stage; ``warnings``; ``timings`` ((step, seconds) in
    order); ``devices`` (as resolved against the program)."""

    source: str
    devices: list[Device]
    vmfb: bytes | None = None
    text: str | None = None
    report: Report | None = None
    record: ModuleRecord | None = None
    warnings: list[CompileWarning] = dataclasses.field(default_factory=list)
    timings: list[tuple[str, float]] = dataclasses.field(default_factory=list)

    def save(self, path: str | os.PathLike) -> None:
        """Writes the vmfb (or the IR) at ``path``, atomically; never over
        the source file."""
        _save(os.fspath(path), self.vmfb if self.vmfb is not None else self.text.encode(), self.source)

    def render_report(self, kind: str) -> bytes:
        """The report as ``.json`` or ``.md``, or the picture of where work
        runs as ``.svg`` or ``.dot`` (``kind``: a file name or its ending)."""
        from . import report

        if self.report is None:
            raise CompileError(UsageError("no report: the compile stopped before mdc's passes ran"),
                               cli_errors.USAGE_STATUS)
        if not kind.endswith(REPORT_ENDINGS):
            raise CompileError(UsageError(f"{kind}: a report ends in .json or .md, a picture in .svg or .dot"),
                               cli_errors.USAGE_STATUS)
        return report.render(kind, self.report, self.record, self.devices, self.source)

    def save_report(self, path: str | os.PathLike) -> None:
        path = os.fspath(path)
        _save(path, lambda: self.render_report(path), self.source)


def _save(path: str, data: bytes | Callable[[], bytes], source: str | None = None) -> None:
    """Writes ``data`` (or what it makes, once ``path`` is known not to be
    ``source``) at ``path`` atomically, never over ``source``."""
    if source is not None and os.path.exists(source) and same_file(path, source):
        raise CompileError(UsageError(f"{path} is the source file {source}: saving there would "
                                      "overwrite the program; name another file"), cli_errors.USAGE_STATUS)
    try:
        write_atomically(path, data() if callable(data) else data)
    except CannotWrite as e:
        raise CompileError(MdcError(f"cannot write {path}: {e}"), cli_errors.FAILURE_STATUS) from None


def check_request(devices: Mapping[str, str] | Sequence[str], opts: CompileOptions):
    """The devices (``{"a": "local[0]"}`` or ``["a=local[0]"]``, in order)
    as Devices and the links parsed, the options checked: the
    mistakes a compile can find before it loads IREE."""
    flags = [f"{n}={s}" for n, s in devices.items()] if isinstance(devices, Mapping) else list(devices)
    given = [options.parse_device(flag) for flag in flags]
    links = [options.parse_link(link) for link in opts.links]
    if not given:
        raise UsageError("no --device given; e.g. --device=a=local[0]")
    opts.check()
    placement_options.check_placement(given, **placement_options.placement_settings(opts))
    return given, links


def compile(source: str | os.PathLike | MlirText, devices: Mapping[str, str] | Sequence[str],
            **compile_options) -> CompileResult:
    """Compiles ``source`` for ``devices``; ``compile_options`` are
    CompileOptions' fields. Raises CompileError."""
    opts = CompileOptions(**compile_options)
    job = _Compile(source, devices, opts)
    try:
        try:
            return job.run()
        except Exception as e:
            if not (job.own_data_tiling and _data_tiling_may_be_why(e)):
                raise
            # mdc's own default may have broken the program: compile it as without (module docstring).
            without = dataclasses.replace(opts, cpu_data_tiling=False)
            first, job = job, _Compile(source, devices, without, job.placement)
            result = job.run()
            result.warnings.insert(0, _data_tiling_dropped(e))
            result.timings[:0] = [("first try (with data tiling)", sum(t for _, t in first.timings))]
            return result
    except CompileError:
        raise
    except Exception as e:
        error = as_compile_error(e, job.warnings, job.timings, dict(compile_options, devices=devices))
        if error is None:
            raise
        raise error from e


def _data_tiling_may_be_why(error: Exception) -> bool:
    """Whether a compile with mdc's data tiling that failed so may compile
    without it: a packed crossing, or IREE or mdc failing on the program
    (not a command-line mistake)."""
    from mdc.passes.analysis.crossings import PackedCrossing

    flag_errors, _ = cli_errors.iree_error_types()
    return isinstance(error, PackedCrossing) or (
        as_compile_error(error) is not None and not isinstance(error, (UsageError, flag_errors)))


def _data_tiling_dropped(error: Exception) -> CompileWarning:
    from mdc.passes.analysis.crossings import PackedCrossing

    if isinstance(error, PackedCrossing):
        return CompileWarning(error.location, f"{DATA_TILING_DROPPED}, which {error.why}")
    who = "mdc" if isinstance(error, MdcError) else "IREE"
    return CompileWarning(None, f"{DATA_TILING_DROPPED}: with it, {who} failed: {_one_line(error)} "
                                "(--no-cpu-data-tiling skips the first try)")


class _Compile:
    """One compile: the steps of ``compile``, and what they found so far
    (``placement``: --place=auto's decision, once made, which a retry reuses)."""

    def __init__(self, source, devices, opts: CompileOptions, placement: dict | None = None):
        self.source, self.given, self.opts, self.placement = source, devices, opts, placement
        self.name = source.name if isinstance(source, MlirText) else os.fspath(source)
        self.warnings: list[CompileWarning] = []
        self.timings: list[tuple[str, float]] = []
        self.own_data_tiling = False  # whether mdc turned data tiling on (options.cpu_code_flags)

    def _timed(self, step: str, body: Callable):
        start = time.perf_counter()
        try:
            return body()
        finally:
            self.timings.append((step, time.perf_counter() - start))

    def run(self) -> CompileResult:
        opts = self.opts
        devices, links = check_request(self.given, opts)
        ireec, stages = self._timed("load IREE's compiler", _load_compiler)
        if opts.mlir_flags:
            ireec.set_global_flags("mdc-compile", list(opts.mlir_flags))
        on_step = _label_timing_reports if MLIR_TIMING in opts.mlir_flags else None
        compiler = ireec.Compiler(None, on_step=on_step)
        module = self._timed("parse", lambda: self._parse(compiler))
        devices, hops = self._timed("read the program's devices", lambda: self._resolve(module, devices))
        link_overrides = options.resolve_link_names(links, devices)
        default_device = options.chosen_default_device(devices, list(opts.iree_flags))
        self.own_data_tiling = opts.cpu_data_tiling and bool(options.cpu_code_flags(devices, opts.iree_flags, hops))
        compiler.set_flags(options.iree_flags(devices, list(opts.iree_flags), opts.cpu_data_tiling, hops))
        make_context = lambda twins: self._context(stages, devices, link_overrides, hops, default_device, twins)
        ctx, result = self._run_stages(stages, compiler, module, make_context)
        self.warnings += [CompileWarning(loc, message) for loc, message in ctx.report.warnings]
        names = options.STAGE_NAMES
        reached_mdc = not opts.compile_to or names.index(opts.compile_to) >= names.index("mdc")
        out = CompileResult(self.name, devices, report=ctx.report if reached_mdc else None,
                            record=ctx.record if reached_mdc else None, warnings=self.warnings, timings=self.timings)
        if opts.compile_to:
            out.text = ireec.module_text(result)
        else:
            out.vmfb = result
        return out

    def _parse(self, compiler):
        if isinstance(self.source, MlirText):
            module = compiler.parse_text(self.source.text, self.source.name)
        else:
            check_input(self.name)
            module = compiler.parse_file(self.name)
        if not _has_public_function(module):
            self.warnings.append(CompileWarning(self.name, NO_PUBLIC_FUNCTION))
        return module

    def _resolve(self, module, devices: list[Device]):
        devices, hops, warnings = resolve_devices(module, devices)
        self.warnings += [CompileWarning(None, w) for w in warnings]
        return devices, hops

    def _context(self, stages, devices, link_overrides, hops, default_device, twins: bool):
        """The stages' PipelineContext: the settings, the manifest's devices, the stage dumps."""
        from mdc.passes.infra import registry

        opts = self.opts
        settings = registry.CompileSettings(
            links=link_overrides, staging=opts.staging, staging_pieces=opts.staging_pieces,
            pinned_arguments=opts.pinned_arguments, devices={d.name: d for d in devices},
            default_device=default_device, host_entry_points=opts.host_entry_points, result_storage_twins=twins,
            generate_entry_point=opts.generate_entry_point, **options.codegen_settings(opts),
            **placement_options.placement_settings(opts), place_decided=self.placement)
        ctx = stages.PipelineContext(settings, keep_devices=hops, manifest_devices=devices if opts.manifest else None,
                                     timings=[])
        if opts.dump_stages:
            ctx.dump = _stage_dumper(opts.dump_stages)
        return ctx

    def _run_stages(self, stages, compiler, module, make_context):
        """Runs the stages on ``module``; owns the retry without
        result-storage twins (the module docstring says why)."""
        from mdc.passes.analysis.crossings import PackedCrossing

        twins = self.opts.result_storage_twins
        pristine = module.clone() if twins else None
        ctx = make_context(twins)
        started = time.perf_counter()
        try:
            result = stages.run(compiler, module, ctx, self.opts.compile_to)
        except Exception as e:
            self.placement = self.placement or ctx.report.placement
            if not ctx.report.storage_twins or as_compile_error(e) is None \
                    or isinstance(e, (cli_errors.iree_error_types()[0], PackedCrossing)):
                self.timings += ctx.timings
                raise
            retry = make_context(False)
            try:
                result = stages.run(compiler, pristine, retry, self.opts.compile_to)
            except Exception as again:
                if as_compile_error(again) is None:
                    raise
                self.timings += ctx.timings
                raise e from None
            self.timings.append(("first try (with result-storage twins)", time.perf_counter() - started))
            self.warnings.append(_twins_dropped(e, ctx.report.storage_twins))
            ctx = retry
        self.timings += ctx.timings
        return ctx, result


def _twins_dropped(error: Exception, twins) -> CompileWarning:
    names = ", ".join(f"@{twin}" for _, twin, _ in twins)
    who = "mdc" if isinstance(error, MdcError) else "IREE"
    return CompileWarning(None, f"{who} could not compile the result-storage twins ({names}): {_one_line(error)}; "
                                "compiled without them (the Python API then returns those results as copies)")


def _load_compiler():
    from . import ireec, stages

    return ireec, stages


def _label_timing_reports(step: str) -> None:
    """--mlir-timing: IREE prints one report per step it runs, on stderr;
    this line before each says which step the next report belongs to."""
    print(f"mdc-compile: --mlir-timing report of {step}:", file=sys.stderr, flush=True)


def _has_public_function(module) -> bool:
    from mdc.passes.ir import ir_adapter as irx

    return any(irx.is_function(op) and irx.is_public(op) for op in irx.top_level_ops(module))


def _stage_dumper(directory: str):
    from .ireec import module_text

    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--dump-stages={directory}: cannot create the directory: {e.strerror}") from None

    def dump(stage_name, module):
        _save(os.path.join(directory, f"{stage_name}.mlir"), module_text(module).encode())

    return dump


def iree_flags_for(source: str | None, devices: Mapping[str, str] | Sequence[str],
                   **compile_options) -> list[str]:
    """The IREE flags a compile of ``source`` sets, its ``mlir_flags`` last
    (mdc-compile --print-iree-flags); names resolve against the program
    where it exists."""
    from mdc.passes.ir.module_facts import referenced_devices

    from .ireec import Compiler, set_global_flags

    opts = CompileOptions(**compile_options)
    given, _ = check_request(devices, opts)
    if opts.mlir_flags:
        set_global_flags("mdc-compile", list(opts.mlir_flags))
    hops = []
    if source is not None and os.path.exists(source):
        given, hops = options.names_and_hops(given, referenced_devices(Compiler([]).parse_file(source)))
    return options.iree_flags(given, [*opts.iree_flags, *opts.mlir_flags], opts.cpu_data_tiling, hops)
