"""Print the lowest versions pyproject.toml's dependencies allow, one ``name==version`` a line.

The lower bounds are defined once, in ``[project] dependencies``; CI installs these pins
(``pip install -r``, their own dependencies resolved as a user's pip would) and runs a smoke
subset of the tests, so a bound the code no longer works with fails the build::

    python tools/lowest_pins.py > lowest.txt
    python tools/lowest_pins.py --check   # in the environment they went into: exit 1 unless each is the one imported
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def lowest_pins(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """``name==X`` for each dependency's ``>=X`` (``~=`` and ``==`` count too); an error for one without."""
    pins = []
    for line in tomllib.loads(pyproject.read_text())["project"]["dependencies"]:
        requirement = Requirement(line)
        lowest = [s.version for s in requirement.specifier if s.operator in (">=", "~=", "==")]
        if len(lowest) != 1:
            raise SystemExit(f"{pyproject}: {line!r} has no single lower bound (>=, ~= or ==) to test")
        marker = f"; {requirement.marker}" if requirement.marker else ""
        pins.append(f"{requirement.name}=={lowest[0]}{marker}")
    return pins


def check(pins: list[str]) -> list[str]:
    """The pins this interpreter does not see installed at exactly their version (first on its path)."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.version import Version

    wrong = []
    for pin in pins:
        name, _, wanted = pin.split(";")[0].partition("==")
        try:
            found = version(name)
        except PackageNotFoundError:
            found = "none"
        if found == "none" or Version(found) != Version(wanted):
            wrong.append(f"{name}: {found} installed, {wanted} wanted")
    return wrong


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        wrong = check(lowest_pins())
        print("\n".join(wrong) or "lowest versions installed: " + ", ".join(lowest_pins()))
        raise SystemExit(1 if wrong else 0)
    sys.stdout.write("".join(f"{pin}\n" for pin in lowest_pins()))
