"""The check fixture tree, run from inside it (as a project runs check from its root)."""

from __future__ import annotations

import contextlib
import functools
import shutil
from pathlib import Path

import pytest

from stream_doctor.check.run import CheckResult, execute, prepare
from stream_doctor.options import CheckOptions
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
