"""The manifest contract alone (contract/manifest.py, manifest_record.py):
no compile, no device. Round trips, the bytes the writer emits, every
validation error, manifests an older mdc-compile wrote, and the rule that
the manifest's keys are named in contract/ only."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from mdc.contract import manifest as keys
from mdc.contract.manifest_record import Device, FunctionEntry, Manifest, ManifestError, Staging, ValueEntry

REPO = Path(__file__).resolve().parents[2]

# A manifest with every key, as mdc-compile writes it (the writer's bytes:
# keys in the format's order, no spaces, the spec as --device spelled it).
FULL = (
    '{"format":"mdc.manifest/1",'
    '"devices":[{"name":"device_a","spec":"local","kind":"local","ordinal":0},'
    '{"name":"device_b","spec":"cuda[0]","kind":"cuda","ordinal":0},'
    '{"name":"device_c","spec":"hip[1]","kind":"hip","ordinal":1}],'
    '"default":"device_b",'
    '"staging":[{"from":"device_a","to":"device_b","owner":"device_b"},'
    '{"from":"device_b","to":"device_c","owner":null,"via":"device_a"}],'
    '"pinned_arguments":{"f":{"0":"device_b","2":"device_b"},"g":{"1":"device_c"}},'
    '"host":"device_a","host_entry_points":{"f":"f$host"},'
    '"no_host_entry_points":true,'
    '"result_storage":{"f":{"function":"f$into","results":[0,2]}},'
    '"functions":{"main$async":{"model":"coarse-fences",'
    '"arguments":[{"type":"tensor<?x8xf32>","device":"device_b"}],'
    '"results":[{"type":"!hal.buffer_view","device":null}]},'
    '"main":{"model":"sync","arguments":[],"results":[],"calls":"main$async"}},'
    '"tied_dims":{"f":[[[0,0],[1,0]]]},'
    '"argument_bounds":{"main$async":[[0,0,4096]],"main":[[0,0,4096]]},'
    '"result_devices":{"f":{"1":"device_c"}},'
    '"mutable_globals":["counter"],'
    '"state_by_function":{"f":["counter"],"g":[]}}'
)


def full() -> dict:
    return json.loads(FULL)


def test_round_trip_is_byte_identical():
    m = Manifest.from_json(FULL)
    assert m.to_json() == FULL
    assert Manifest.from_json(m.to_json()) == m
    # The record reads each key into its field.
    assert m.devices == (Device("device_a", "local", 0), Device("device_b", "cuda", 0), Device("device_c", "hip", 1))
    assert [d.spec for d in m.devices] == ["local[0]", "cuda[0]", "hip[1]"]
    assert m.staging == (Staging("device_a", "device_b", "device_b"), Staging("device_b", "device_c", None, "device_a"))
    assert m.default_device == "device_b" and m.host == "device_a" and m.no_host_entry_points
    assert m.pinned("f") == {0: "device_b", 2: "device_b"} and m.pinned("h") == {}
    assert m.host_entry_point("f") == "f$host" and m.storage_twin("f") == ("f$into", (0, 2))
    assert m.twins() == {"f$host", "f$into"}
    assert m.function("main") == FunctionEntry("main", keys.MODEL_SYNC, (), (), "main$async")
    assert m.function("main$async").arguments == (ValueEntry("tensor<?x8xf32>", "device_b"),)
    assert m.tied_groups("f") == (((0, 0), (1, 0)),) and m.tied_groups("g") == ()
    assert m.bounds_of("main") == ((0, 0, 4096),) and m.bounds_of("f") == ()
    assert m.result_devices == (("f", 1, "device_c"),)
    assert (m.state_of("f"), m.state_of("g"), m.state_of("h")) == (("counter",), (), ("counter",))


def test_a_record_built_in_code_round_trips():
    m = Manifest((Device("a", "local", 0, given_spec="local[0]"), Device("b", "vulkan", 0)),
                 (Staging("a", "b", "b"),), mutable_globals=())
    text = m.to_json()
    assert text == ('{"format":"mdc.manifest/1","devices":[{"name":"a","spec":"local[0]","kind":"local",'
                    '"ordinal":0},{"name":"b","spec":"vulkan[0]","kind":"vulkan","ordinal":0}],'
                    '"staging":[{"from":"a","to":"b","owner":"b"}],"mutable_globals":[]}')
    assert Manifest.from_json(text) == m and Manifest.from_json(text).to_json() == text


def test_the_writer_emits_the_format_byte_for_byte():
    """pipeline/manifest.manifest_json on the inputs FULL describes writes
    FULL exactly (the vmfbs embed it: a changed byte changes them all)."""
    from mdc.passes.analysis.stub_signatures import StubSignature, StubValue
    from mdc.pipeline.manifest import manifest_json
    from mdc.pipeline.options import parse_device

    @dataclasses.dataclass
    class Policy:
        owner: str | None
        via: str | None = None

    class Model:
        def staged_pairs(self):
            return [("device_a", "device_b", Policy("device_b")), ("device_b", "device_c", Policy(None, "device_a"))]

    devices = [dataclasses.replace(parse_device(f"{n}={s}"), name=f"device_{n}")
               for n, s in [("a", "local"), ("b", "cuda[0]"), ("c", "hip[1]")]]
    functions = {"main$async": StubSignature("main$async", keys.MODEL_COARSE_FENCES,
                                             (StubValue("tensor<?x8xf32>", "device_b"),),
                                             (StubValue("!hal.buffer_view"),)),
                 "main": StubSignature("main", keys.MODEL_SYNC, (), (), "main$async")}
    text = manifest_json(devices, Model(), {"f": {0: "device_b", 2: "device_b"}, "g": {1: "device_c"}},
                         {"f": "f$host"}, "device_a", functions, [("f", "f$into", [0, 2])], ["counter"],
                         {"f": ["counter"], "g": []}, {"f": [[(0, 0), (1, 0)]]}, default="device_b",
                         no_host_entry_points=True, result_devices={"f": {1: "device_c"}},
                         argument_bounds={"main$async": [(0, 0, 4096)]})
    assert text == FULL
    # Nothing to say: only the keys the format always carries.
    bare = manifest_json(devices[:1], type("NoStaging", (), {"staged_pairs": lambda self: []})(), {}, {}, "device_a",
                         {}, (), (), {"f": []}, {}, None, False, {})
    assert bare == ('{"format":"mdc.manifest/1","devices":[{"name":"device_a","spec":"local","kind":"local",'
                    '"ordinal":0}],"staging":[],"mutable_globals":[]}')


def test_every_key_is_written_and_read():
    """The writer emits every key the format names (FULL holds each), and
    the reader reads each: dropping one changes what it reads. A key the
    format does not name is ignored."""
    assert list(full()) == list(keys.TOP_LEVEL_KEYS)
    whole = Manifest.from_json(FULL)
    together = {keys.HOST, keys.HOST_ENTRY_POINTS}  # one is invalid without the other
    for key in keys.TOP_LEVEL_KEYS:
        if key in (keys.FORMAT_KEY, keys.DEVICES):  # the reader refuses a manifest without them
            continue
        dropped = together if key in together else {key}
        less = {k: v for k, v in full().items() if k not in dropped}
        assert Manifest.from_json(json.dumps(less)) != whole, key
    assert Manifest.from_json(_with(host="device_b")).host == "device_b"
    assert Manifest.from_json(json.dumps(dict(full(), unknown_key=[1]))) == whole


def test_older_manifests_read_as_today():
    """Written before mdc-compile recorded kind and ordinal, the default
    device, staging and mutable globals: devices come from their spec, the
    first device stands for the default, nothing is staged, and whether
    the program keeps state is not known."""
    m = Manifest.from_json(json.dumps({"format": "mdc.manifest/1",
                                       "devices": [{"name": "x", "spec": "local[2]"}, {"name": "y", "spec": "cuda"}]}))
    assert [(d.name, d.kind, d.ordinal, d.spec) for d in m.devices] == [("x", "local", 2, "local[2]"),
                                                                         ("y", "cuda", 0, "cuda[0]")]
    assert m.default is None and m.default_device == "x"
    assert m.staging == () and m.mutable_globals is None and m.state_of("f") is None
    assert m.pinned_arguments == () and m.host is None and m.tied_dims == () and not m.no_host_entry_points
    assert m.argument_bounds == () and m.bounds_of("f") == ()
    # The writer's own spec spelling survives a round trip; the record's
    # spec is KIND[ORDINAL] however it was spelled.
    assert [d["spec"] for d in json.loads(m.to_json())["devices"]] == ["local[2]", "cuda"]


def _with(**changes) -> str:
    data = full()
    for key, value in changes.items():
        if value is _DROP:
            data.pop(key)
        else:
            data[key] = value
    return json.dumps(data)


_DROP = object()
_DEVICE = {"name": "device_a", "spec": "local", "kind": "local", "ordinal": 0}

# (manifest text, the key its error must name, a phrase the error says)
BAD = [
    (_with(devices=_DROP), "devices", "is missing"),
    (_with(devices={}), "devices", "not a JSON array"),
    (_with(devices=[]), "devices", "declares no devices"),
    (_with(devices=[_DEVICE, _DEVICE]), "devices", "declares a device twice"),
    (_with(devices=[{"spec": "local"}]), "devices", "without 'name'"),
    (_with(devices=[{"name": "a", "spec": "local[x]"}]), "devices", "bad device spec"),
    (_with(devices=[dict(_DEVICE, ordinal="first")]), "devices", "invalid literal"),
    (_with(default="device_z"), "default", "names device 'device_z', which it does not declare"),
    (_with(staging=[{"from": "device_a", "to": "device_b", "owner": None}]), "staging", "neither owner nor via"),
    (_with(staging=[{"from": "device_a", "owner": "device_b"}]), "staging", "without 'to'"),
    (_with(staging={"from": "device_a"}), "staging", "not a JSON array"),
    (_with(pinned_arguments={"f": {"0": "z"}}), "pinned_arguments", "pins arguments in device 'z', which it does not"),
    (_with(pinned_arguments={"f": {"first": "device_a"}}), "pinned_arguments", "invalid literal"),
    (_with(pinned_arguments=["f"]), "pinned_arguments", "not a JSON object"),
    (_with(host="device_z"), "host", "device 'device_z' of its host entry points is not declared"),
    (_with(host=_DROP), "host", "device None of its host entry points is not declared"),
    (_with(host_entry_points=["f"]), "host_entry_points", "not a JSON object"),
    (_with(result_storage={"f": {"function": "f$into", "results": []}}), "result_storage", "lists no results"),
    (_with(result_storage={"f": {"function": "f$into", "results": [-1]}}), "result_storage", "negative"),
    (_with(result_storage={"f": {"results": [0]}}), "result_storage", "without 'function'"),
    (_with(functions={"f": {"model": "async", "arguments": [], "results": []}}), "functions",
     "gives @f the unknown model 'async'"),
    (_with(functions={"f": {"model": "sync", "arguments": [{"type": "i32", "device": "z"}], "results": []}}),
     "functions", "places a value of @f on device 'z', which it does not declare"),
    (_with(functions={"f": {"model": "sync", "results": []}}), "functions", "without 'arguments'"),
    (_with(tied_dims={"f": [[[0, 0]]]}), "tied_dims", "fewer than two"),
    (_with(tied_dims={"f": [[[0, -1], [1, 0]]]}), "tied_dims", "negative"),
    (_with(tied_dims={"f": [[0, 1]]}), "tied_dims", "cannot unpack"),
    (_with(argument_bounds={"f": [[0, 0, 0]]}), "argument_bounds", "a bound below 1"),
    (_with(argument_bounds={"f": [[-1, 0, 8]]}), "argument_bounds", "a negative index"),
    (_with(argument_bounds={"f": [[0, 8]]}), "argument_bounds", "not enough values"),
    (_with(argument_bounds=[[0, 0, 8]]), "argument_bounds", "not a JSON object"),
    (_with(result_devices={"f": {"0": "z"}}), "result_devices", "places results on device 'z', which it does not"),
    (_with(result_devices={"f": {"out": "device_a"}}), "result_devices", "invalid literal"),
    (_with(mutable_globals="counter"), "mutable_globals", "is not a list"),
    (_with(state_by_function={"f": "counter"}), "state_by_function", "is not a map of lists"),
]


@pytest.mark.parametrize("text,key,phrase", BAD, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(BAD)])
def test_each_validation_error_is_one_line_naming_its_key(text, key, phrase):
    with pytest.raises(ManifestError) as e:
        Manifest.from_json(text)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(f'malformed mdc.manifest: "{key}" '), message
    assert phrase in message, message


@pytest.mark.parametrize("text,phrase", [
    ("{", "mdc.manifest is not valid JSON"),
    ("[]", "unsupported mdc.manifest format 'list' (expected 'mdc.manifest/1')"),
    (_with(format="mdc.manifest/2"), "unsupported mdc.manifest format 'mdc.manifest/2' (expected 'mdc.manifest/1')"),
    (_with(format=_DROP), "unsupported mdc.manifest format None"),
])
def test_json_and_format_errors(text, phrase):
    with pytest.raises(ManifestError, match="^" + phrase.replace("(", r"\(").replace(")", r"\)")) as e:
        Manifest.from_json(text)
    assert "\n" not in str(e.value)


def test_the_shim_reports_them_as_its_own_errors():
    from mdc.runtime_shim import ShimError
    from mdc.runtime_shim.manifest import Manifest as ShimManifest
    from mdc.runtime_shim.manifest import parse_manifest

    with pytest.raises(ShimError, match='^malformed mdc.manifest: "tied_dims" has a group with fewer than two'):
        parse_manifest(_with(tied_dims={"f": [[[0, 0]]]}))
    read = parse_manifest(FULL)
    assert isinstance(read, ShimManifest) and read.source == "mdc.manifest" and read.to_json() == FULL
    assert read.signature("main$async").text == ("async func @main$async(%input0: tensor<?x8xf32> "
                                                 "{iree.abi.affinity = #hal.device.promise<@device_b>}) "
                                                 "-> (%output0: !hal.buffer_view)")


def test_one_device_record():
    """--device's option, a module's declared device, the manifest's device
    and the shim's are one record: the option keeps its spelling for the
    manifest and the IREE flag; a declared device's location is for
    diagnostics and takes no part in comparing."""
    from mdc.passes.ir.module_facts import Device as DeclaredDevice
    from mdc.pipeline.options import Device as DeviceOption, iree_flags, parse_device

    assert DeviceOption is Device and DeclaredDevice is Device
    device = parse_device("a=cuda")
    assert device == Device("a", "cuda", 0) and device.given_spec == "cuda" and device.spec == "cuda[0]"
    assert device.spec_as_given == "cuda" and Device("b", "hip", 1).spec_as_given == "hip[1]"
    assert iree_flags([device], [])[0] == "--iree-hal-target-device=a=cuda"
    assert Device("a", "cuda", 0, location="x.mlir:1") == device and "x.mlir" not in repr(device)
    assert not device.uses_host_memory and Device("h", "local").uses_host_memory


# -- manifest keys are named in contract/ only ----------------------------------

# pipeline/report.py writes another document (--report's JSON), whose own
# keys happen to share these names; pipeline/placement_markdown.py reads its
# "placement" (passes/assignment/report.py's).
OTHER_DOCUMENTS = {"pipeline/report.py": {"devices", "name", "spec", "from", "to", "kind"},
                   "pipeline/placement_markdown.py": {"functions", "function", "host", "name", "device"}}


def key_literals(source: str, names) -> list[tuple[int, str]]:
    """(line, key) of each string constant in ``names`` that ``source``
    uses as a key: a dict display's key, a subscript, the key of a
    ``.get``/``.pop``/``.setdefault`` call, or the left side of ``in``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            candidates = [k for k in node.keys if k is not None]
        elif isinstance(node, ast.Subscript):
            candidates = [node.slice]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "pop", "setdefault") and node.args):
            candidates = [node.args[0]]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            candidates = [node.left]
        else:
            continue
        found += [(c.lineno, c.value) for c in candidates if isinstance(c, ast.Constant) and c.value in names]
    return found


def test_key_scan_finds_a_key_literal():
    sample = 'x = {"devices": []}\ny = data["staging"]\nz = data.get("host")\nif "default" in data: pass\n'
    assert key_literals(sample, set(keys.TOP_LEVEL_KEYS)) == [(1, "devices"), (2, "staging"), (3, "host"),
                                                              (4, "default")]


def test_manifest_keys_are_named_in_contract_only():
    names = set(keys.TOP_LEVEL_KEYS) | set(keys.NESTED_KEYS)
    found = []
    for folder in ("pipeline", "runtime_shim"):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            allowed = OTHER_DOCUMENTS.get(rel, set())
            found += [f"{rel}:{line}: {key!r}" for line, key in key_literals(path.read_text(), names - allowed)]
    assert not found, "manifest keys spelled outside contract/ (use mdc.contract.manifest's names):\n" + \
        "\n".join(found)
