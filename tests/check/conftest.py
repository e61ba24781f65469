"""The check fixture tree, run from inside it (as a project runs check from its root)."""

from __future__ import annotations

import contextlib
import functools
import shutil
from pathlib import Path

import pytest

from stream_doctor.check.run import CheckResult, execute, prepare
from stream_doctor.values.command_options import CheckOptions
from tests.conftest import ROOT

TREE = ROOT / "fixtures" / "check-tree"


@pytest.fixture
def in_tree(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(TREE)
    return TREE


@pytest.fixture
def tree_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the tree to change (``--update-expectations``, edited configuration)."""
    copy = tmp_path / "tree"
    shutil.copytree(TREE, copy)
    monkeypatch.chdir(copy)
    return copy


@functools.cache
def tree_result() -> CheckResult:
    """The one shared result every reporter is snapshot-tested from: the whole tree, its configuration."""
    with contextlib.chdir(TREE):
        return execute(prepare(CheckOptions(paths=(".",))))


@functools.cache
def clean_result() -> CheckResult:
    """A run where all is as expected: the clean captures and the one whose bug is declared."""
    with contextlib.chdir(TREE):
        return execute(prepare(CheckOptions(paths=("clean", "bugs/empty_input_bug.jsonl"))))


@pytest.fixture(scope="session")
def accepted_result(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    """The tree's cut gzip with a sidecar that declares its SD000, beside a clean capture: the run passes,
    and the unreadable capture passes only because its expectations accept it."""
    folder = tmp_path_factory.mktemp("accepted")
    (folder / "broken").mkdir()
    shutil.copy(TREE / "broken/truncated.sse.gz", folder / "broken")
    (folder / "broken/truncated.sse.gz.expect.toml").write_text('[[expect]]\ncode = "SD000"\n')
    shutil.copy(TREE / "clean/one_call.sse", folder)
    with contextlib.chdir(folder):
        return execute(prepare(CheckOptions(paths=(".",), isolated=True)))
