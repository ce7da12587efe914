"""The house's shape holds: no module of passes/, pipeline/, runtime_shim/,
contract/ or profiler/ over 450 lines, no class over 250, no function over 70, no
import cycle among mdc's modules (scripts/house_shape.py measures it)."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _house_shape():
    spec = importlib.util.spec_from_file_location("house_shape", os.path.join(ROOT, "scripts", "house_shape.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_finding():
    problems, largest = _house_shape().findings()
    assert problems == [], "\n".join(problems)
    assert largest["module"][0] > 0 and largest["function"][0] > 0  # it did read the tree


def test_it_finds_a_cycle_and_an_oversized_function():
    shape = _house_shape()
    assert shape.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert shape.cycles({"a": {"b"}, "b": set()}) == []
    assert shape.MAX_FUNCTION_LINES == 70 and shape.MAX_CLASS_LINES == 250 and shape.MAX_MODULE_LINES == 450
