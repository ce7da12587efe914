"""``--place=FILE.json``: an assignment written by hand, or the placement of
an earlier ``--report`` (the same shape), read and checked against a
function's work graph.

The file is a JSON object:

    {"units":   [{"id": 0, "device": "cpu"}, {"id": 1, "device": "gpu"}, ...],
     "weights": [{"name": "w1", "device": "gpu"}, ...]}

for a program with one public function, or ``{"functions": {"main": {...},
...}}`` with one such object per public function; a whole ``--report``
file (its ``"placement"`` key holds one of the two) is read as well. Other
keys of an entry (``label``, ``seconds``, ``bytes``) are ignored. Every unit
and every weight the function reads must be given one of the two devices,
and a unit or weight the program already pins to a device must be given
that device. Each mistake is a one-line error naming the file.
"""

from __future__ import annotations

import json

from ..infra.diagnostics import MdcError
from .work_graph import Assignment, WorkGraph


class AssignmentFileError(MdcError):
    """An assignment file that cannot be read or does not fit the program."""


def read_assignment_file(path: str) -> dict:
    """The file's placement object (``{"units": ..., "weights": ...}`` or
    ``{"functions": ...}``)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise AssignmentFileError(f"--place={path}: cannot read the assignment file: {e.strerror}") from None
    except ValueError as e:
        raise AssignmentFileError(f"--place={path}: the assignment file is not JSON: {e}") from None
    if isinstance(data, dict) and isinstance(data.get("placement"), dict):
        data = data["placement"]
    if not isinstance(data, dict) or not ({"units", "functions"} & set(data)):
        raise AssignmentFileError(f"--place={path}: expected a JSON object with \"units\" and \"weights\" "
                                  "(or \"functions\")")
    return data


def function_entry(path: str, data: dict, function: str, functions: int) -> dict:
    """The entry of ``function`` in a placement object (under "functions"
    where it has them)."""
    if "functions" in data:
        entry = data["functions"].get(function) if isinstance(data["functions"], dict) else None
        if not isinstance(entry, dict):
            raise AssignmentFileError(f"--place={path}: no assignment for the public function @{function}")
        return entry
    if functions != 1:
        raise AssignmentFileError(f"--place={path}: the program has {functions} public functions: give each its "
                                  "assignment under \"functions\"")
    return data


def _entries(path: str, entry: dict, key: str, id_key: str) -> dict:
    """``{id or name: device}`` of the ``key`` list of ``entry``."""
    items = entry.get(key, [])
    if not isinstance(items, list):
        raise AssignmentFileError(f"--place={path}: \"{key}\" must be a list")
    out = {}
    for item in items:
        if not isinstance(item, dict) or id_key not in item or not isinstance(item.get("device"), str):
            raise AssignmentFileError(f"--place={path}: each of \"{key}\" needs \"{id_key}\" and \"device\", "
                                      f"got {json.dumps(item)}")
        out[item[id_key]] = item["device"]
    return out


def assignment_for(path: str, data: dict, graph: WorkGraph, functions: int) -> Assignment:
    """The file's assignment of ``graph``'s units and weights, checked."""
    entry = function_entry(path, data, graph.function, functions)
    units = _entries(path, entry, "units", "id")
    weights = _entries(path, entry, "weights", "name")
    devices = (graph.host, graph.accelerator)
    where = f"--place={path}: @{graph.function}"
    for key, device in [*units.items(), *weights.items()]:
        if device not in devices:
            raise AssignmentFileError(f"{where}: '{key}' is given device '{device}'; the devices are "
                                      f"{' and '.join(devices)}")
    ids = {u.id for u in graph.units}
    for key in units:
        if key not in ids:
            raise AssignmentFileError(f"{where}: no unit {key!r} (units are 0 to {len(ids) - 1})")
    names = {w.name for w in graph.weights}
    for key in weights:
        if key not in names:
            raise AssignmentFileError(f"{where}: the function reads no weight '{key}'")
    for unit in graph.units:
        _check(where, f"unit {unit.id} ({unit.label})", units.get(unit.id), unit.pinned)
    for weight in graph.weights:
        _check(where, f"weight '{weight.name}'", weights.get(weight.name), weight.pinned)
    return Assignment(units={u.id: units[u.id] for u in graph.units},
                      weights={w.name: weights[w.name] for w in graph.weights})


def _check(where: str, what: str, device: str | None, pinned: str | None) -> None:
    if device is None:
        raise AssignmentFileError(f"{where}: {what} has no device")
    if pinned is not None and device != pinned:
        raise AssignmentFileError(f"{where}: {what} must be on '{pinned}' (the program, or another function, "
                                  f"puts it there), not '{device}'")
