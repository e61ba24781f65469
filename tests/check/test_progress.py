"""The progress bar: only on a terminal and for long runs; the run's results never depend on it."""

from __future__ import annotations

import re

import pytest

from stream_doctor.check.progress import MIN_CAPTURES, progress


def test_disabled_or_short_runs_draw_nothing(capsys) -> None:  # type: ignore[no-untyped-def]
    for total, enabled in ((1000, False), (MIN_CAPTURES - 1, True)):
        with progress(total, enabled) as advance:
            for _ in range(total):
                advance()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_enabled_advances_to_the_end(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """On a terminal the bar counts every capture up to the total, on standard error only."""
    import rich.console

    terminal = rich.console.Console
    # The bar's console, as on a terminal (under pytest standard error is not one).
    monkeypatch.setattr(
        rich.console,
        "Console",
        lambda stderr: terminal(stderr=stderr, force_terminal=True, color_system=None, width=80),
    )
    with progress(MIN_CAPTURES, enabled=True) as advance:
        for _ in range(MIN_CAPTURES):
            advance()
    captured = capsys.readouterr()
    assert captured.out == ""  # standard output holds the reports
    drawn = re.findall(r"checking.*?(\d+)/(\d+)", captured.err)
    assert drawn, captured.err
    assert drawn[-1] == (str(MIN_CAPTURES), str(MIN_CAPTURES))  # its last frame: every capture done
