"""What each tool's --version prints: mdc's version and that of the IREE
package it runs on, read from the installed distributions' metadata (no
IREE import: mdc-run never loads the compiler for it)."""

from __future__ import annotations

import argparse
from importlib import metadata

IREE_COMPILER = "iree-base-compiler"
IREE_RUNTIME = "iree-base-runtime"


def version_text(tool: str, iree_packages: tuple[str, ...]) -> str:
    """``tool (mdc) X.Y.Z`` and one ``IREE: package version`` line per
    distribution in ``iree_packages``."""
    lines = [f"{tool} (mdc) {_installed('mdc')}"]
    lines += [f"IREE: {name} {_installed(name)}" for name in iree_packages]
    return "\n".join(lines)


def _installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def add_version_argument(parser: argparse.ArgumentParser, iree_packages: tuple[str, ...]) -> None:
    """--version on ``parser``: prints version_text for its tool, exits 0."""
    parser.add_argument("--version", action=_Version, iree_packages=iree_packages,
                        help="print mdc's version and IREE's, then exit")


class _Version(argparse.Action):
    """argparse's own version action formats its text when the parser is
    built; this reads the metadata only when --version is given."""

    def __init__(self, option_strings, dest, iree_packages, help=None):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)
        self.iree_packages = iree_packages

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text(parser.prog, self.iree_packages))
        parser.exit(0)
