"""The layers of docs/architecture.md, enforced: ``lint-imports`` checks the contracts of
``pyproject.toml`` ([tool.importlinter]) over this checkout's package, and the page lists the same
layers as the contract, so the picture a maintainer reads is the one the tool checks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: import-linter's command as installed beside this interpreter (the test extra has it), or on PATH.
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")


def contract(contract_id: str) -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (found,) = [c for c in config["contracts"] if c["id"] == contract_id]
    return found  # type: ignore[no-any-return]


@pytest.mark.skipif(LINT_IMPORTS is None, reason="import-linter is not installed (the test extra has it)")
def test_no_import_reaches_back_up_the_layers(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's package, whatever is installed
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_architecture_page_draws_the_contract_s_layers() -> None:
    """docs/architecture.md's layer block, top to bottom, is the contract's ``layers`` list (the
    contract's parentheses, which mark a layer that may be missing, aside)."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    (block,) = re.findall(r"<!-- layers -->\n```\n(.*?)```", page, re.S)
    drawn = [line.split("  ")[0].strip() for line in block.splitlines() if line.strip()]
    declared = [str(layer).replace("(", "").replace(")", "") for layer in contract("layers")["layers"]]  # type: ignore[attr-defined]
    assert drawn == declared


@pytest.mark.skipif(LINT_IMPORTS is None, reason="import-linter is not installed (the test extra has it)")
def test_a_back_edge_or_an_unplaced_module_breaks_the_contract(tmp_path: Path) -> None:
    """On a copy of the package: a capture module that imports the engine, and a new top-level
    module no layer names (the contract is exhaustive), each fail the check, naming the import and
    the module."""
    shutil.copytree(ROOT / "stream_doctor", tmp_path / "stream_doctor", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "stream_doctor/capture/scratch_back_edge.py").write_text("import stream_doctor.engine.pipeline\n")
    (tmp_path / "stream_doctor/scratch_unplaced.py").write_text('"""A module no layer names."""\n')
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "stream_doctor.capture.scratch_back_edge -> stream_doctor.engine.pipeline" in result.stdout
    assert "- stream_doctor.scratch_unplaced" in result.stdout and "not listed as layers" in result.stdout
