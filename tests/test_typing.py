"""The package is typed strictly: ``mypy --strict`` (pyproject's [tool.mypy]) passes, so it cannot regress."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import ROOT

#: mypy --strict over the whole package
pytestmark = [pytest.mark.slow]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (the test extra has it)")
def test_mypy_strict_passes() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (
        "mypy --strict (pyproject.toml [tool.mypy]) found problems; run `.venv/bin/mypy` and fix them:\n"
        + result.stdout[-4000:]
    )
