"""The package is typed strictly: ``mypy --strict`` (pyproject's [tool.mypy]) passes, so it cannot regress."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

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


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (the test extra has it)")
def test_records_are_frozen_to_the_type_checker(tmp_path: Path) -> None:
    """The accumulated stream's records are stored by plain slot stores (``util.records.record``): nothing
    stops an assignment at run time, so mypy must, for the package and for code that uses it."""
    from stream_doctor.accumulate.stream import ToolCall

    code = tmp_path / "assigns.py"
    code.write_text(
        "from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall\n"
        "def change(call: ToolCall, stream: AccumulatedStream) -> None:\n"
        "    call.name = 'other'\n"
        "    stream.calls = ()\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.stdout.count("is read-only") == 2, result.stdout
    assert ToolCall.__hash__ is not None  # hashable by its fields, as a frozen dataclass is
