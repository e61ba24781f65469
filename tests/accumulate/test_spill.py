"""A big replay keeps its calls' argument text in a temporary file (``accumulate/spill.py``): with the
spill forced from the first call, every report is what it is in memory, and the file never outlives
the report, the replay that failed, or ``Report.close``.
"""

from __future__ import annotations

import gc
import os
import pickle
import tempfile
from pathlib import Path

import pytest

from stream_doctor.accumulate import spill
from stream_doctor.engine import pipeline as engine
from stream_doctor.engine.pipeline import replay
from stream_doctor.engine.stages import RunError
from stream_doctor.reporters import RenderOptions, json_report
from stream_doctor.values.options import Options
from tests.conftest import render_terminal
from tests.test_golden import CAPTURES

#: A capture of several calls.
CALLS = "fixtures/anthropic/parallel_calls.sse"


def _calls(report: engine.Report) -> list[tuple[object, ...]]:
    return [
        (
            c.raw_arguments,
            c.arguments,
            tuple(c.fragment_texts),
            tuple(c.fragment_positions),
            c.fragments,
            c.fragment_count,
            c.byte_count,
            c.parse_failure,
            c.input_source,
        )  # fmt: skip
        for c in report.calls
    ]


def _open_in(folder: Path) -> list[str]:
    """This process's open files in ``folder`` (an unnamed temporary file shows as ``folder/#N (deleted)``)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


@pytest.fixture
def spill_everything(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every call's text goes to a temporary file in ``tmp_path``."""
    monkeypatch.setattr(spill, "SPILL_THRESHOLD", 0)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_every_fixture_reports_alike_with_its_calls_on_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    in_memory = {}
    for name in CAPTURES:
        report = replay(f"fixtures/{name}", Options())
        in_memory[name] = (json_report.render(report, RenderOptions()), render_terminal(report), _calls(report))
    monkeypatch.setattr(spill, "SPILL_THRESHOLD", 0)
    spilled = 0
    for name in CAPTURES:
        report = replay(f"fixtures/{name}", Options())
        spilled += any(call.stored.store.spilled for call in report.calls)
        got = (json_report.render(report, RenderOptions()), render_terminal(report), _calls(report))
        assert got == in_memory[name], name
    assert spilled > 100  # the fixtures with calls


def test_a_selected_call_and_its_fragments_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    in_memory = replay(CALLS, Options()).select("2").to_dict()
    monkeypatch.setattr(spill, "SPILL_THRESHOLD", 0)
    report = replay(CALLS, Options())
    assert all(call.stored.store.spilled for call in report.calls)
    detailed = report.select("2").to_dict()
    assert detailed == in_memory
    (call,) = detailed["calls"]
    assert call["fragment_list"] and "".join(f["text"] for f in call["fragment_list"]) == call["raw_arguments"]


def test_a_spilled_call_pickles_with_its_text(spill_everything: Path) -> None:
    report = replay(CALLS, Options())
    calls = pickle.loads(pickle.dumps(report.calls))
    report.close()
    assert [c.raw_arguments for c in calls] and calls == pickle.loads(pickle.dumps(calls))
    assert not any(c.stored.store.spilled for c in calls)  # held in memory once unpickled


def test_the_file_goes_with_the_report(spill_everything: Path) -> None:
    report = replay(CALLS, Options())
    assert report.calls[0].raw_arguments and _open_in(spill_everything)
    assert os.listdir(spill_everything) == []  # unnamed: nothing to clean up after a kill either
    del report
    gc.collect()
    assert _open_in(spill_everything) == []


def test_close_lets_go_of_the_file_at_once(spill_everything: Path) -> None:
    with replay(CALLS, Options()) as report:
        assert _open_in(spill_everything)
    assert _open_in(spill_everything) == []
    with pytest.raises(ValueError, match="closed"):
        report.calls[0].raw_arguments  # noqa: B018


def test_a_failed_replay_leaves_no_file(spill_everything: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("a rule broke")

    monkeypatch.setattr(engine, "diagnose", broken)
    gc.disable()  # no collection may tidy up behind the engine's back
    try:
        with pytest.raises(RuntimeError, match="a rule broke"):
            replay(CALLS, Options())
        assert _open_in(spill_everything) == []
    finally:
        gc.enable()


def test_an_unreadable_capture_leaves_no_file(spill_everything: Path) -> None:
    with pytest.raises(RunError):
        replay("capture.sse", Options(), data=b"not a capture\n")
    assert _open_in(spill_everything) == []


def test_below_the_threshold_nothing_touches_the_disk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    report = replay(CALLS, Options())
    assert not any(call.stored.store.spilled for call in report.calls)
    assert _open_in(tmp_path) == []
