"""``--client`` runs the installed library wherever a capture is replayed: a capture on standard input or
given as bytes (written to a temporary file for the library's process), each file of a multi-file
session (a process per file, each turn its file's), as ``check`` does per capture
(``tests/check/test_check_clients.py``). The near misses: the library absent, and the model says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stream_doctor.api import replay
from stream_doctor.cli import app
from stream_doctor.values.report import Report
from tests.clients.test_client_runs import _stand_in
from tests.conftest import FIXTURES

#: the installed libraries run in child processes wherever a capture is replayed
pytestmark = [pytest.mark.slow]

ONE_CALL = FIXTURES / "anthropic/one_call.sse"
RAN = "installed anthropic 2.12.0 (run)"
MISSING = "the library is not installed: `pip install anthropic` to run it"
ABSENT = "raise ImportError('not installed here')\n"


def _sources(report: Report) -> list[dict[str, Any]]:
    """Each call's anthropic-python source, in call order."""
    return [
        extra.data["anthropic-python"]["source"]
        for call in report.calls
        for extra in report.extras[report.number(call)]
        if extra.key == "clients"
    ]


def _stdin_source(*options: str) -> dict[str, Any]:
    args = ["replay", "-", "--client", "anthropic-python", "--format", "json", *options]
    result = CliRunner().invoke(app, args, input=ONE_CALL.read_bytes())
    assert result.exit_code == 0, result.output
    source: dict[str, Any] = json.loads(result.stdout)["calls"][0]["extras"]["clients"]["anthropic-python"]["source"]
    return source


def test_a_capture_on_standard_input_is_run_through_the_library() -> None:
    source = _stdin_source()
    assert (source["label"], source["note"]) == (RAN, None)


def test_standard_input_without_the_library_is_modelled_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", ABSENT)
    source = _stdin_source()
    assert (source["mode"], source["note"]) == ("model", MISSING)


def test_standard_input_in_model_mode_is_read_as_a_stream_and_starts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a temporary file was written for no library")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", refused)
    assert _stdin_source("--client-mode", "model")["note"] == "--client-mode model"


def test_a_capture_given_as_bytes_is_run_through_the_library() -> None:
    (source,) = _sources(replay(ONE_CALL.read_bytes(), clients="anthropic-python"))
    assert source["label"] == RAN


def test_a_capture_too_big_on_standard_input_is_one_line() -> None:
    args = ["replay", "-", "--client", "anthropic-python", "--max-bytes", "1KiB"]
    result = CliRunner().invoke(app, args, input=ONE_CALL.read_bytes())
    assert result.exit_code == 2
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert result.output.startswith("stream-doctor: error: <stdin>")


@pytest.fixture
def session(tmp_path: Path) -> list[str]:
    """Two captures of one session: the first clean, the second with a BOM the SDK keeps (and so raises)."""
    clean, bom = tmp_path / "session" / "a.sse", tmp_path / "session" / "b.sse"
    clean.parent.mkdir()
    clean.write_bytes(ONE_CALL.read_bytes())
    bom.write_bytes(b"\xef\xbb\xbf" + ONE_CALL.read_bytes())
    return [str(clean), str(bom)]


def test_each_file_of_a_session_is_run_through_the_library(session: list[str]) -> None:
    report = replay(session, clients="anthropic-python")
    assert [s["label"] for s in _sources(report)] == [RAN, RAN]
    (raised,) = [f for f in report.findings if f.code == "SD805"]  # the second file's run, not the first's
    assert raised.message.startswith(f"{RAN} would raise AssertionError")
    assert raised.location is not None and raised.location.path == session[1]


def test_a_session_without_the_library_is_modelled_turn_by_turn(
    session: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", ABSENT)
    report = replay(session, clients="anthropic-python")
    assert [(s["mode"], s["note"]) for s in _sources(report)] == [("model", MISSING)] * 2
    assert not [f for f in report.findings if f.code == "SD805"]  # the model reads past the BOM


@pytest.mark.parametrize("running", [1, 3])
def test_a_long_session_runs_one_capture_per_library_at_most_running_at_once(
    monkeypatch: pytest.MonkeyPatch, running: int
) -> None:
    from stream_doctor.clients import PROFILES, runs

    alive: set[tuple[str, str]] = set()
    most = [0]

    def start(profile: str, path: str, *rest: object) -> tuple[str, str]:
        assert all(busy != profile for busy, _ in alive)  # a library's process runs one capture at a time
        alive.add((profile, path))
        most[0] = max(most[0], len(alive))
        return profile, path

    def collect(token: tuple[str, str], started: float) -> dict[str, Any]:
        alive.remove(token)
        return {"answered": token}

    monkeypatch.setattr(runs, "_start", start)
    monkeypatch.setattr(runs, "_collect", collect)
    monkeypatch.setattr(runs, "RUNNING", running)
    profiles = (PROFILES["anthropic-python"], PROFILES["langchain"])
    files = {f"turn{n}.sse": f"/captures/turn{n}.sse" for n in range(5)}
    monkeypatch.setattr(runs.os.path, "isfile", lambda path: True)
    library_runs = runs.LibraryRuns(files, None, "anthropic", profiles, "auto")
    assert len(alive) == min(running, 2)  # each library's first capture, started together
    asked = [(profile, name) for name in reversed(files) for profile in profiles]  # the last file first
    for profile, name in asked:
        answer = library_runs.answer(profile, name)
        assert answer == {"answered": (profile.name, files[name])}
    assert most[0] == min(running, 2) and not alive and not library_runs.pending
    library_runs.close()
