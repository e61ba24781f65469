"""Shared test fixtures: run the pipeline from the repository root, render reports reproducibly."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@pytest.fixture(autouse=True)
def _at_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports carry paths as the user typed them; tests type them relative to the root."""
    monkeypatch.chdir(ROOT)


def render_terminal(report: object, width: int = 110, **kwargs: object) -> str:
    from stream_doctor.reporters import terminal

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, no_color=True, color_system=None, highlight=False, force_terminal=False)
    terminal.render(report, console, **kwargs)  # type: ignore[arg-type]
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"
