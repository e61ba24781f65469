"""Shared test fixtures: run the pipeline from the repository root, render reports reproducibly."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
#: Real recordings of other projects (never copied into the project), beside the repository as
#: ``../shared/corpus``, or where ``STREAM_DOCTOR_CORPUS`` says (a worktree, another checkout).
CORPUS = Path(os.environ.get("STREAM_DOCTOR_CORPUS") or ROOT.parent / "shared" / "corpus")
#: What a test that needs the corpus says when it skips.
NO_CORPUS = f"the shared capture corpus is not at {CORPUS} (set STREAM_DOCTOR_CORPUS to where it is)"


@pytest.fixture(autouse=True)
def _at_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports carry paths as the user typed them; tests type them relative to the root."""
    monkeypatch.chdir(ROOT)


def render_terminal(report: object, width: int = 110, call: str | None = None, timeline: bool = False) -> str:
    from stream_doctor.reporters import RenderOptions, terminal

    if call is not None:
        report = replace(report, selected=call)  # type: ignore[type-var]
    return terminal.render(report, RenderOptions(width=width, timeline=timeline))  # type: ignore[arg-type]
