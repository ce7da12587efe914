"""What `pip install` puts into a user's environment: one import name, mdc.

The source tree keeps its top-level folders (passes/, pipeline/,
runtime_shim/, contract/, profiler/); installed, they are mdc.passes and so on, so a
user's own `pipeline` or `passes` module neither shadows ours nor is
shadowed by it.
"""
import importlib.metadata
import os
import re
import subprocess
import sys


def test_the_distribution_installs_one_top_level_name():
    dist = importlib.metadata.distribution("mdc")
    assert dist.read_text("top_level.txt").split() == ["mdc"]


def test_console_scripts_live_under_mdc():
    scripts = {e.name: e.value for e in importlib.metadata.distribution("mdc").entry_points
               if e.group == "console_scripts"}
    assert set(scripts) == {"mdc-compile", "mdc-opt", "mdc-run", "mdc-profile", "mdc-generate"}
    assert all(v.startswith("mdc.") for v in scripts.values()), scripts


def test_old_top_level_names_are_not_importable_outside_the_checkout(tmp_path):
    # From a folder that is not the checkout, with no PYTHONPATH: only what
    # the installed distribution provides.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = ("import importlib.util as u\n"
             "print([n for n in ('passes', 'pipeline', 'runtime_shim', 'contract', 'profiler') if u.find_spec(n)])\n"
             "from mdc.runtime_shim import load\n"
             "import mdc.passes.lowering, mdc.pipeline.cli, mdc.contract, mdc.profiler.probes\n"
             "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["[]", "ok"], r.stdout


def test_every_source_package_is_listed_in_pyproject():
    """A folder with an __init__.py under a mapped source folder is a
    package a non-editable install must carry: pyproject.toml lists it, and
    the staging library travels with the lowering that reads it."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    setup = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    found = set()
    for name, folder in setup["package-dir"].items():
        for init in (root / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(root / folder)
            found.add(".".join([name, *rel.parts]))
    assert found - listed == set(), f"packages pyproject.toml does not list: {sorted(found - listed)}"
    def folder_of(package: str) -> Path:
        base = max((n for n in setup["package-dir"] if package == n or package.startswith(n + ".")), key=len)
        return root / setup["package-dir"][base] / package[len(base):].lstrip(".").replace(".", "/")

    for package, files in setup.get("package-data", {}).items():
        assert all((folder_of(package) / f).is_file() for f in files), (package, files)


def test_design_map_names_every_room():
    """docs/DESIGN.md's "Where things are" names every folder of passes/
    (and the other source folders): a room the map leaves out, or one it
    names that is gone, means the map no longer matches the tree."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    design = (root / "docs" / "DESIGN.md").read_text()
    section = design.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`((?:passes|pipeline|runtime_shim|contract|profiler)/[\w/]*)`", section))
    rooms = {f"passes/{p.name}/" for p in (root / "passes").iterdir() if (p / "__init__.py").is_file()}
    left_out = sorted(r for r in rooms if not any(n.startswith(r) for n in named))
    assert not left_out, f"rooms the map leaves out: {left_out}"
    assert all((root / n).exists() for n in named), [n for n in named if not (root / n).exists()]
