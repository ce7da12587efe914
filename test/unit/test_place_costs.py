"""The costs file (contract/place_costs.py) and measured times in the cost
model (passes/assignment/measured.py): the format round-trips and refuses
what is wrong in one line naming the file; a graph's digest changes with
what its measurements depend on and not with pins; a measured unit,
crossing and call replace the model's, and the search follows them."""

from __future__ import annotations

import dataclasses
import json

import pytest

from mdc.contract.machine_profile import default_profile
from mdc.contract.place_costs import (CostsError, MeasuredCrossing, MeasuredDevice, MeasuredUnit, PlaceCosts,
                                      load_costs)
from mdc.passes.assignment.cost_model import CostModel
from mdc.passes.assignment.measured import graph_digest, unit_measured, with_measurements
from mdc.passes.assignment.search import find_assignment

from assignment_fakes import ACC, HOST, chain

KINDS = {HOST: "local", ACC: "cuda"}


def _costs(graph, unit_seconds: dict, crossings=()) -> PlaceCosts:
    units = tuple(MeasuredUnit(graph.function, uid, "linalg.matmul", graph.units[uid].label, seconds)
                  for uid, seconds in unit_seconds.items())
    return PlaceCosts({graph.function: graph_digest(graph)},
                      {HOST: MeasuredDevice("local", 1e-6, 1e-7), ACC: MeasuredDevice("cuda", 2e-5, 1e-6)},
                      units, tuple(crossings), {"tool": "test"}, "costs file t.json")


def _model():
    return CostModel.of(default_profile(), KINDS)


def test_the_format_round_trips(tmp_path):
    g = chain(3)
    costs = _costs(g, {0: {HOST: 1e-3, ACC: 1e-5}}, [MeasuredCrossing(HOST, ACC, 1000, 4e-5)])
    path = tmp_path / "c.json"
    path.write_text(costs.to_json())
    again = load_costs(str(path))
    assert again.functions == costs.functions and again.devices == costs.devices
    assert again.units == costs.units and again.crossings == costs.crossings
    assert again.units[0].key == f"@{g.function}#0 {g.units[0].label}"


@pytest.mark.parametrize("spoil, message", [
    (lambda d: d.update(format="x"), 'not a costs file (no "format": "mdc-place-costs"'),
    (lambda d: d.update(version=2), "version 2: this mdc reads version 1"),
    (lambda d: d.pop("functions"), "the file has no 'functions'"),
    (lambda d: d["units"][0]["seconds"].update(cpu=-1.0), "units[0].seconds.cpu is -1.0: expected a finite number"),
    (lambda d: d["units"][0]["seconds"].update(tpu=1.0), "units[0].seconds names device 'tpu'"),
    (lambda d: d["crossings"][0].update(bytes=1.5), "crossings[0].bytes is 1.5: expected a whole number"),
    (lambda d: d["devices"]["cpu"].pop("kind"), "devices.cpu has no 'kind'"),
])
def test_a_wrong_file_is_one_line_naming_it(tmp_path, spoil, message):
    g = chain(2)
    doc = json.loads(_costs(g, {0: {HOST: 1.0}}, [MeasuredCrossing(HOST, ACC, 8, 1e-6)]).to_json())
    spoil(doc)
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CostsError) as e:
        load_costs(str(path))
    assert str(e.value).startswith(f"costs file {path}: ") and message in str(e.value)
    assert "\n" not in str(e.value)


def test_not_json_and_missing_are_one_line(tmp_path):
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(CostsError, match=r"bad.json: not JSON"):
        load_costs(str(tmp_path / "bad.json"))
    with pytest.raises(CostsError, match=r"none.json: no such file"):
        load_costs(str(tmp_path / "none.json"))


def test_the_digest_follows_the_work_not_the_pins():
    g = chain(3)
    assert graph_digest(g) == graph_digest(chain(3))
    pinned = dataclasses.replace(g, units=(dataclasses.replace(g.units[0], pinned=ACC), *g.units[1:]))
    assert graph_digest(pinned) == graph_digest(g)
    assert graph_digest(chain(3, value_bytes=2000)) != graph_digest(g)
    assert graph_digest(chain(4)) != graph_digest(g)


def test_measured_times_replace_the_model_where_given():
    g = chain(3)
    model = _model()
    measured = with_measurements(model, _costs(g, {1: {HOST: 0.5}}, [MeasuredCrossing(HOST, ACC, 1000, 0.25)]),
                                 g, KINDS)
    assert measured.unit_seconds(g.units[1], HOST) == 0.5
    assert unit_measured(measured, g.units[1], HOST) and not unit_measured(measured, g.units[1], ACC)
    assert measured.unit_seconds(g.units[1], ACC) == model.unit_seconds(g.units[1], ACC)
    assert measured.unit_seconds(g.units[0], HOST) == model.unit_seconds(g.units[0], HOST)
    assert measured.crossing_seconds(1000, HOST, ACC) == 0.25
    assert measured.crossing_seconds(1000, ACC, HOST) == model.crossing_seconds(1000, ACC, HOST)
    assert measured.call_seconds(ACC) == 2e-5 and measured.call_seconds(HOST) == 1e-6


def test_the_search_follows_a_measured_slow_unit():
    """The default profile puts a big matmul chain on cuda; measured slow
    there, the middle matmul stays on the host."""
    g = chain(3, value_bytes=16, flops=[10**10] * 3)
    model = _model()
    before = find_assignment(g, model, None).assignment
    assert set(before.units.values()) == {ACC}
    slow = with_measurements(model, _costs(g, {u.id: {HOST: 1e-6, ACC: 1e-6} for u in g.units} |
                                           {1: {HOST: 1e-6, ACC: 10.0}}), g, KINDS)
    after = find_assignment(g, slow, None).assignment
    assert after.units[1] == HOST


def test_another_programs_file_is_refused():
    g = chain(3)
    costs = _costs(chain(4), {})
    costs = dataclasses.replace(costs, functions={g.function: graph_digest(chain(4))})
    with pytest.raises(CostsError, match=r"^costs file t.json: measured for another program, or with other bounds"):
        with_measurements(_model(), costs, g, KINDS)
    other = dataclasses.replace(costs, functions={"other": "0"})
    with pytest.raises(CostsError, match=rf"has no function @{g.function}; it has @other"):
        with_measurements(_model(), other, g, KINDS)


def test_a_unit_that_does_not_compile_is_left_out_of_its_device_module():
    """mdc-profile --program: where the module of every unit fails, each is
    compiled alone and those that fail are left out (modelled there)."""
    from mdc.profiler.program import _compile_dropping

    compiled = []

    def compile_one(text: str) -> bytes:
        if "@u1(" in text:
            raise RuntimeError("error: no kernel for u1")
        compiled.append(text)
        return b"vmfb"

    functions = {f"u{i}": f"util.func public @u{i}() {{\n}}" for i in range(3)}
    vmfb, dropped = _compile_dropping(functions, compile_one)
    assert vmfb == b"vmfb" and list(dropped) == ["u1"] and "no kernel for u1" in dropped["u1"]
    assert "@u0(" in compiled[-1] and "@u2(" in compiled[-1] and "@u1(" not in compiled[-1]
    with pytest.raises(RuntimeError):  # a failure no single function has is the module's own
        _compile_dropping({"u0": "util.func public @u0() {\n}"},
                          lambda text: (_ for _ in ()).throw(RuntimeError("x")) if "@tiny" in text else b"")
