"""mdc.pipeline.compile, the Python twin of mdc.runtime_shim.load: a
program compiled to bytes and to a file, loaded and run against numpy; the
report; the one exception type, with a one-line message and the exit
status the command line gives; a stage's IR; the retries without
result-storage twins and without data tiling; and the warning for a
program with nothing to call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mdc.pipeline import CompileError, CompileResult, MlirText, compile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TWO_ARGS = os.path.join(HERE, "programs", "two_args.mlir")
LOOP = os.path.join(REPO, "test", "lit", "regress", "Inputs", "loop_result_returned.mlir")
MALFORMED = os.path.join(REPO, "test", "lit", "compile", "Inputs", "malformed.mlir")
CPU = ["--iree-llvmcpu-target-cpu=host"]
PAIR = {"a": "local[0]", "b": "local[1]"}


@pytest.fixture(scope="module")
def staged_pair() -> CompileResult:
    return compile(TWO_ARGS, devices=PAIR, links=["a:b=staged"], iree_flags=CPU)


def _add_across(path: str) -> None:
    from mdc.runtime_shim import load

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 0.5, dtype=np.float32)
    with load(path, ["local-task", "local-sync"]) as m:
        np.testing.assert_array_equal(np.asarray(m.add_across(x, y)), x + y)


def test_compile_to_bytes_and_file_then_run(staged_pair, tmp_path):
    assert isinstance(staged_pair.vmfb, bytes) and staged_pair.text is None
    out = tmp_path / "m.vmfb"
    staged_pair.save(out)
    assert out.read_bytes() == staged_pair.vmfb
    _add_across(str(out))


def test_same_bytes_as_the_command_line(staged_pair, tmp_path):
    """mdc-compile runs the driver: the same options give the same vmfb,
    and devices as a list of NAME=SPEC give what the mapping gives."""
    out = tmp_path / "cli.vmfb"
    subprocess.run([sys.executable, "-m", "mdc.pipeline", TWO_ARGS, "--device=a=local[0]", "--device=b=local[1]",
                    "--link=a:b=staged", *CPU, "-o", str(out)], check=True, capture_output=True, cwd=REPO)
    assert out.read_bytes() == staged_pair.vmfb
    as_list = compile(TWO_ARGS, devices=["a=local[0]", "b=local[1]"], links=["a:b=staged"], iree_flags=CPU)
    assert as_list.vmfb == staged_pair.vmfb
    assert [d.name for d in as_list.devices] == ["device_a", "device_b"]


def test_report(staged_pair, tmp_path):
    report = staged_pair.report
    assert report is not None and report.crossings, "the staged pair's crossing is reported"
    data = json.loads(staged_pair.render_report(".json"))
    assert data["crossings"], data
    path = tmp_path / "report.md"
    staged_pair.save_report(path)
    assert path.read_text().startswith("#")
    assert [step for step, _ in staged_pair.timings][:3] == ["load IREE's compiler", "parse",
                                                            "read the program's devices"]
    assert staged_pair.warnings == []
    with pytest.raises(CompileError) as caught:
        staged_pair.render_report("report.txt")
    assert caught.value.exit_code == 2


def test_save_never_over_the_source(staged_pair, tmp_path):
    """save and save_report refuse the source file under any spelling (here
    a symbolic link to it), as mdc-compile refuses -o naming its input."""
    link = tmp_path / "link.mlir"
    link.symlink_to(TWO_ARGS)
    with open(TWO_ARGS, "rb") as f:
        before = f.read()
    for save in (staged_pair.save, staged_pair.save_report):
        with pytest.raises(CompileError) as caught:
            save(link)
        assert str(caught.value) == (f"{link} is the source file {TWO_ARGS}: saving there would overwrite the "
                                     "program; name another file")
        assert caught.value.exit_code == 2
    with open(TWO_ARGS, "rb") as f:
        assert f.read() == before


@pytest.mark.parametrize("devices, status, words", [
    ({"a": "gpu[0]", "b": "local[1]"}, 2, "unknown device kind 'gpu'"),
    ({"a": "local[0]"}, 2, "the program uses device '@device_b', but no devices entry gives it"),
    ({}, 2, "no devices entry given"),
])
def test_bad_devices_raise_one_line(devices, status, words):
    with pytest.raises(CompileError) as caught:
        compile(TWO_ARGS, devices=devices)
    error = caught.value
    assert words in str(error) and "\n" not in str(error)
    assert error.exit_code == status


@pytest.mark.parametrize("keywords, message", [
    ({"place": "auto", "gpu_memory": "lots"}, "gpu_memory='lots': expected a size in bytes, e.g. 8G or 8GiB"),
    ({"place": "auto", "gpu_memory": "8 parsecs"}, "gpu_memory='8 parsecs': expected a size in bytes"),
    ({"gpu_memory": 5}, "gpu_memory needs place='auto'"),
    ({"place_objective": "fast"}, "place_objective='fast': expected latency or throughput"),
    ({"place": "auto", "max_dims": ["arg0.d0=x"]}, "max_dims entry 'arg0.d0=x': expected NAME=N"),
    ({"links": ["a:a=staged"]}, "links entry 'a:a=staged': a device cannot link to itself"),
    ({"pinned_arguments": True, "manifest": False}, "pinned_arguments=True needs the manifest"),
    ({"devices": {"a": "gpu[0]"}}, "devices entry 'a=gpu[0]': unknown device kind 'gpu'"),
])
def test_errors_name_the_keyword_not_the_flag(keywords, message):
    """A CompileError's str() names the keyword the caller gave (with its
    value as the caller wrote it), not mdc-compile's flag; render() and the
    command line keep the flag."""
    keywords = {"devices": PAIR, **keywords}
    with pytest.raises(CompileError) as caught:
        compile(TWO_ARGS, **keywords)
    assert str(caught.value).startswith(message), str(caught.value)
    assert "--" not in str(caught.value) and caught.value.exit_code == 2
    assert caught.value.render("mdc-compile").startswith("mdc-compile: error: --")


def test_every_option_has_its_flag_spelled():
    """keyword_spelling.FLAG_KEYWORDS maps every flag of CompileOptions' fields (all
    but the pass-through IREE and MLIR flags) and devices onto its keyword,
    and every flag it names is one mdc-compile takes."""
    import dataclasses

    from mdc.pipeline import cli, driver, keyword_spelling

    keywords = {k.split("=")[0] for k in keyword_spelling.FLAG_KEYWORDS.values()}
    fields = {f.name for f in dataclasses.fields(driver.CompileOptions)} - {"iree_flags", "mlir_flags"}
    assert keywords == fields | {"devices"}
    flags = {s for action in cli._compile_parser()._actions for s in action.option_strings}
    assert set(keyword_spelling.FLAG_KEYWORDS) <= flags


def test_the_command_line_keeps_naming_flags(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mdc.pipeline", TWO_ARGS, "--device=a=local[0]", "--device=b=local[1]",
                        "--place=auto", "--gpu-memory=lots", "-o", str(tmp_path / "x.vmfb")],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 2
    assert r.stderr.startswith("mdc-compile: error: --gpu-memory=lots: expected a size in bytes"), r.stderr


def test_run_passes_errors_name_the_keyword():
    from mdc.pipeline import run_passes

    with pytest.raises(CompileError) as caught:
        run_passes("module {}", ["assign-devices"], devices=["cpu=local[0]", "gpu=local[1]"], place="auto",
                   gpu_memory="lots")
    assert str(caught.value).startswith("gpu_memory='lots': expected a size"), str(caught.value)


def test_program_errors_raise_one_line(tmp_path):
    with pytest.raises(CompileError) as caught:
        compile(MALFORMED, devices={"a": "local[0]"})
    assert str(caught.value).startswith(f"{MALFORMED}:3:10: ") and "\n" not in str(caught.value)
    assert caught.value.exit_code == 1
    with pytest.raises(CompileError) as caught:
        compile(str(tmp_path / "missing.mlir"), devices={"a": "local[0]"})
    assert str(caught.value) == f"no such input file: {tmp_path / 'missing.mlir'}"
    assert caught.value.exit_code == 2
    with pytest.raises(CompileError) as caught:
        compile(TWO_ARGS, devices=PAIR, iree_flags=["--iree-no-such-flag"])
    assert caught.value.exit_code == 2 and "\n" not in str(caught.value)


def test_compile_to_a_stage(tmp_path):
    stream = compile(TWO_ARGS, devices=PAIR, links=["a:b=staged"], compile_to="stream", iree_flags=CPU)
    assert stream.vmfb is None and "stream.cmd.execute" in stream.text
    assert stream.report is not None and stream.report.crossings
    stream.save(tmp_path / "m.mlir")
    assert (tmp_path / "m.mlir").read_text() == stream.text
    flow = compile(TWO_ARGS, devices=PAIR, compile_to="flow", iree_flags=CPU)
    assert "flow.tensor.transfer" in flow.text or "flow.dispatch" in flow.text
    assert flow.report is None, "mdc's passes did not run before the flow stage"
    with pytest.raises(CompileError, match="no report"):
        flow.render_report(".json")
    with pytest.raises(CompileError):
        compile(TWO_ARGS, devices=PAIR, compile_to="llvm")


def test_retry_without_result_storage_twins(tmp_path):
    """IREE 3.13 cannot compile the twin of @loop (the scf.for result
    written into an output argument; test/lit/regress/iree_loop_output_argument.test):
    the driver compiles the program again without twins, and says so."""
    devices = {"a": "local[0]", "b": "local[1]", "c": "local[2]"}
    result = compile(LOOP, devices=devices, links=["a:b=staged", "c:b=staged"], iree_flags=CPU)
    (warning,) = result.warnings
    assert warning.location is None
    assert warning.message.startswith("IREE could not compile the result-storage twins (@loop$into): ")
    assert "compiled without them" in warning.message
    assert result.report.storage_twins == []
    assert "first try (with result-storage twins)" in [step for step, _ in result.timings]
    path = tmp_path / "loop.vmfb"
    result.save(path)
    from mdc.runtime_shim import load

    x = np.array([1, 2, 3, -4], dtype=np.int8)
    with load(str(path), ["local-task", "local-sync", "local-task"]) as m:
        assert m.manifest.storage_twins == ()
        doubled, moved = m.loop(x, 3)
        np.testing.assert_array_equal(np.asarray(doubled), (x.astype(np.int32) * 8).astype(np.int8))
        np.testing.assert_array_equal(np.asarray(moved), x)


DYNAMIC_MATMUL = os.path.join(REPO, "test", "lit", "regress", "Inputs", "iree_data_tiling_dynamic_matmul.mlir")


def test_data_tiling_dropped_where_iree_fails_with_it(tmp_path):
    """mdc's CPU code defaults are best effort: IREE 3.13 fails on this
    program with data tiling (regress/iree_data_tiling_dynamic_matmul.test),
    so the driver compiles it without, says so, and the result is numpy's;
    cpu_data_tiling=False skips the first try, and data tiling the caller
    asked for is an error."""
    from mdc.runtime_shim import load

    result = compile(DYNAMIC_MATMUL, devices={"a": "local[0]"}, iree_flags=CPU)
    (warning,) = result.warnings
    assert warning.message.startswith("compiled without data tiling: with it, IREE failed: "), warning.message
    assert "'affine.delinearize_index' op no basis element may be statically non-positive" in warning.message
    assert "first try (with data tiling)" in [step for step, _ in result.timings]
    result.save(tmp_path / "mm.vmfb")
    a = np.linspace(-2, 2, 15, dtype=np.float32).reshape(3, 5)
    b = np.linspace(1, -1, 20, dtype=np.float32).reshape(5, 4)
    with load(str(tmp_path / "mm.vmfb"), ["local-task"]) as m:
        np.testing.assert_allclose(np.asarray(m.mm(a, b)), np.tanh(a) @ b, rtol=1e-5, atol=1e-6)
    plain = compile(DYNAMIC_MATMUL, devices={"a": "local[0]"}, iree_flags=CPU, cpu_data_tiling=False)
    assert plain.warnings == [] and "first try (with data tiling)" not in [step for step, _ in plain.timings]
    with pytest.raises(CompileError) as caught:
        compile(DYNAMIC_MATMUL, devices={"a": "local[0]"}, iree_flags=[*CPU, "--iree-opt-data-tiling"])
    assert caught.value.exit_code == 1 and "affine.delinearize_index" in str(caught.value)


FAST_GPU = os.path.join(REPO, "test", "lit", "assign", "Inputs", "fast_gpu_profile.json")


@pytest.mark.parametrize("gpu_memory", [100, 100000])
def test_retry_without_data_tiling_reuses_the_placement(monkeypatch, tmp_path, gpu_memory):
    """--place=auto searches once per compile: the retry without data
    tiling is given the first try's decision. Its report, warnings and
    numbers are those of a compile that never tried data tiling, which
    searches itself; at 100 bytes the search's "fits no work" warning
    comes through the reuse too."""
    from mdc.passes.transforms import assign_devices
    from mdc.runtime_shim import load

    searches = []
    search = assign_devices.find_assignment
    monkeypatch.setattr(assign_devices, "find_assignment", lambda *a, **k: searches.append(1) or search(*a, **k))
    place = dict(place="auto", gpu_memory=gpu_memory, place_profile=FAST_GPU, links=["cpu:gpu=staged"],
                 max_dims=["arg0.d1=64", "arg1.d0=64", "arg1.d1=64"], iree_flags=CPU)
    devices = {"cpu": "local[0]", "gpu": "local[1]"}
    retried = compile(DYNAMIC_MATMUL, devices=devices, **place)
    assert len(searches) == 1
    assert retried.warnings[0].message.startswith("compiled without data tiling: with it, IREE failed: ")
    plain = compile(DYNAMIC_MATMUL, devices=devices, cpu_data_tiling=False, **place)
    assert len(searches) == 2
    assert retried.report.placement == plain.report.placement
    assert [str(w) for w in retried.warnings[1:]] == [str(w) for w in plain.warnings]
    on_gpu = [u["device"] for u in retried.report.placement["units"]].count("gpu")
    assert on_gpu == (0 if gpu_memory == 100 else 2)
    retried.save(tmp_path / "mm.vmfb")
    a = np.linspace(-2, 2, 15, dtype=np.float32).reshape(3, 5)
    b = np.linspace(1, -1, 20, dtype=np.float32).reshape(5, 4)
    with load(str(tmp_path / "mm.vmfb"), ["local-task", "local-task"]) as m:
        np.testing.assert_allclose(np.asarray(m.mm(a, b)), np.tanh(a) @ b, rtol=1e-5, atol=1e-6)


def test_text_source_and_no_public_function():
    with open(TWO_ARGS) as f:
        text = f.read()
    result = compile(MlirText(text, name="two_args"), devices=PAIR, links=["a:b=staged"], iree_flags=CPU)
    assert result.vmfb and result.warnings == [] and result.source == "two_args"
    empty = compile(MlirText("", name="empty.mlir"), devices={"a": "local[0]"}, iree_flags=CPU)
    assert [str(w) for w in empty.warnings] == ["empty.mlir: the program has no public function"]
    assert empty.vmfb


ROUND_TRIP = os.path.join(REPO, "test", "lit", "passes", "Inputs", "local_cuda_round_trip.mlir")


def test_run_passes_is_what_mdc_opt_prints():
    """mdc.pipeline.run_passes, what mdc-opt runs on each input: the same
    text as the command line, by pass name or class; an unknown pass is a
    CompileError with mdc-opt's exit status for it."""
    from mdc.passes.infra import registry
    from mdc.pipeline import run_passes

    with open(ROUND_TRIP) as f:
        text = f.read()
    done = run_passes(text, ["transfer-insertion", "strip-mdc-marks"], name=ROUND_TRIP, staging="copy")
    cli = subprocess.run([sys.executable, "-c", "import sys; from mdc.pipeline.cli import opt_main; "
                          "sys.exit(opt_main())", ROUND_TRIP, "--pass=transfer-insertion,strip-mdc-marks",
                          "--staging=copy"], check=True, capture_output=True, text=True, cwd=REPO)
    assert done.text == cli.stdout and "mdc.staged" not in done.text
    by_class = run_passes(text, [registry.lookup("transfer-insertion"), "strip-mdc-marks"], name=ROUND_TRIP,
                          staging="copy")
    assert by_class.text == done.text
    with pytest.raises(CompileError) as caught:
        run_passes(text, ["no-such-pass"])
    assert str(caught.value) == "unknown pass 'no-such-pass'" and caught.value.exit_code == 2


def test_no_fork_after_an_in_process_compile(tmp_path):
    """Once IREE's compiler has run in this process its thread pool's
    threads exist, and a forked child of such a process can hang on a lock
    one of them held (mdc-compile's fork from a test process that had
    compiled in process did). So the tools' crash isolation runs the body in
    process then, and a command line given after compile() still works."""
    from mdc.contract import forked
    from mdc.pipeline import cli

    first = compile(TWO_ARGS, devices=PAIR, links=["a:b=staged"], iree_flags=CPU)
    assert not forked._can_fork()
    out = tmp_path / "cli.vmfb"
    assert cli.compile_main([TWO_ARGS, "--device=a=local[0]", "--device=b=local[1]", "--link=a:b=staged",
                             *CPU, "-o", str(out)]) == 0
    assert out.read_bytes() == first.vmfb
