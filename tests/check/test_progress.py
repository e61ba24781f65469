"""The progress bar: only on a terminal and for long runs; the run's results never depend on it."""

from __future__ import annotations

from stream_doctor.check.progress import MIN_CAPTURES, progress


def test_disabled_or_short_runs_draw_nothing(capsys) -> None:  # type: ignore[no-untyped-def]
    for total, enabled in ((1000, False), (MIN_CAPTURES - 1, True)):
        with progress(total, enabled) as advance:
            for _ in range(total):
                advance()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_enabled_advances_to_the_end() -> None:
    with progress(MIN_CAPTURES, enabled=True) as advance:
        for _ in range(MIN_CAPTURES):
            advance()
