"""``--client`` runs the installed library (``clients/runs.py``): the verdict is the library's own, at the
version installed, and says so; a library that is missing, hangs, runs out of memory or cannot be driven
leaves the model's answer and a one-line note, never a traceback.

The real libraries come with the test extra; the failing ones are stand-ins put first on the library
process's path (``PYTHONPATH``), so the process imports them instead of the installed package.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stream_doctor import clients as client_registry
from stream_doctor.api import replay
from stream_doctor.cli import app
from stream_doctor.clients import runs
from stream_doctor.clients.naive_start_placeholder import PROFILE as PLACEHOLDER
from stream_doctor.engine.stages import RunError
from tests.conftest import FIXTURES

#: the installed libraries run in child processes on each capture
pytestmark = [pytest.mark.slow]

ONE_CALL = str(FIXTURES / "anthropic/one_call.sse")
INPUT = {"location": "Lisbon, Portugal", "unit": "celsius"}


def _verdict(path: str = ONE_CALL, mode: str = "auto", client: str = "anthropic-python") -> dict[str, Any]:
    report = replay(path, clients=client, client_mode=mode)
    (call,) = report.calls
    (extra,) = [e for e in report.extras[report.number(call)] if e.key == "clients"]
    verdict: dict[str, Any] = extra.data[client]
    return verdict


def _stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, body: str) -> None:
    """``package`` as the library's process imports it: a module that runs ``body``."""
    folder = tmp_path / "stand_in" / package
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(body)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "stand_in"))


def test_the_installed_library_gives_the_verdict_and_says_so() -> None:
    verdict = _verdict()
    assert verdict["source"] == {
        "label": "installed anthropic 2.12.0 (run)",
        "mode": "run",
        "library": "anthropic",
        "version": "2.12.0",
        "note": None,
    }
    (handed,) = verdict["handoffs"]
    # the SDK's content_block_stop event, at the capture's own line and event
    assert (handed["input"], handed["line"], handed["event"]) == (INPUT, 37, 13)
    assert handed["when"] == "the SDK's content_block_stop event (MessageStream)"
    assert verdict["agrees"] is True


def test_what_the_library_raises_is_the_finding_at_its_event() -> None:
    report = replay(str(FIXTURES / "anthropic/delta_for_unstarted_block.sse"), clients="anthropic-python")
    (raised,) = [f for f in report.findings if f.code == "SD805"]
    assert (
        raised.message
        == "installed anthropic 2.12.0 (run) would raise IndexError at line 19 (event 7): list index out of range"
    )
    assert raised.location is not None and raised.location.line == 19


def test_the_model_mode_starts_no_library(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a library's process was started")

    monkeypatch.setattr(subprocess, "Popen", refused)
    verdict = _verdict(mode="model")
    assert verdict["source"] == {
        "label": "model of anthropic-python 2.12.0",
        "mode": "model",
        "library": "anthropic",
        "version": "2.12.0",
        "note": "--client-mode model",
    }
    assert verdict["handoffs"][0]["input"] == INPUT


def test_a_missing_library_leaves_the_model_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", "raise ImportError('not installed here')\n")
    verdict = _verdict()
    assert verdict["source"]["mode"] == "model"
    assert verdict["source"]["note"] == "the library is not installed: `pip install anthropic` to run it"
    assert verdict["handoffs"][0]["input"] == INPUT  # the model's answer
    result = CliRunner().invoke(app, ["replay", ONE_CALL, "--client", "anthropic-python", "--width", "200"])
    said = " ".join(result.output.split())  # the terminal wraps the line
    assert "model of anthropic-python 2.12.0: runs it with" in said
    assert "(the library is not installed: `pip install anthropic` to run it); as the correct client" in said


def test_run_mode_requires_the_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", "raise ImportError('not installed here')\n")
    with pytest.raises(RunError, match="--client-mode run: anthropic-python needs the anthropic package"):
        replay(ONE_CALL, clients="anthropic-python", client_mode="run")
    result = CliRunner().invoke(app, ["replay", ONE_CALL, "--client", "anthropic-python", "--client-mode", "run"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_a_library_that_hangs_is_stopped_at_its_time_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", "import time\ntime.sleep(600)\n")
    monkeypatch.setattr(runs, "RUN_SECONDS", 3.0)
    began = time.monotonic()
    verdict = _verdict()
    assert time.monotonic() - began < 30
    assert verdict["source"]["mode"] == "model"
    assert (
        verdict["source"]["note"]
        == "the library could not be run (no answer within 3 s: stopped); this is the model's answer"
    )
    assert verdict["handoffs"][0]["input"] == INPUT


def test_a_library_that_exhausts_memory_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", "held = bytearray(8 << 30)\n")
    monkeypatch.setattr(runs, "RUN_MEMORY", 1 << 30)
    verdict = _verdict()
    assert verdict["source"]["note"] == "the library could not be run (MemoryError: ); this is the model's answer"
    assert verdict["handoffs"][0]["input"] == INPUT


def test_a_library_that_cannot_be_driven_at_its_version_gives_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it imports, but is not the SDK the driver knows: no Anthropic client, no _base_client
    _stand_in(tmp_path, monkeypatch, "anthropic", "__version__ = '0.0.1'\n")
    verdict = _verdict()
    assert verdict["source"]["mode"] == "model"
    assert verdict["source"]["note"] == (
        "the library could not be run (ModuleNotFoundError: No module named 'anthropic._base_client'); "
        "this is the model's answer"
    )


def _with_model(monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    """The anthropic-python profile as this process models it, changed (the library's process runs the real one)."""
    changed = replace(client_registry.PROFILES["anthropic-python"], **changes)
    monkeypatch.setattr(client_registry, "PROFILES", {"anthropic-python": changed})


def test_both_shows_where_the_model_differs_from_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_model(monkeypatch, machine=PLACEHOLDER.machine)  # a model that hands the start event's {}
    verdict = _verdict(mode="both")
    assert verdict["handoffs"][0]["input"] == INPUT  # the run is the verdict
    said = (
        'installed anthropic 2.12.0 (run) runs it with {"location":"Lisbon, Portugal","unit":"celsius"} at line'
        " 37 (event 13), on the SDK's content_block_stop event (MessageStream), where the model of anthropic-python"
        " 2.12.0 runs it with {} at line 37 (event 13), on completion event (start input)"
    )
    assert verdict["source"]["model_differs"] == said
    report = replay(ONE_CALL, clients="anthropic-python", client_mode="both")
    (differs,) = [f for f in report.findings if f.code.startswith("SD8")]  # the model's SD801 is not the verdict
    assert (differs.code, differs.severity.name, differs.message) == ("SD809", "INFO", said)
    assert differs.location is not None and differs.location.line == 19  # where the call started
    result = CliRunner().invoke(
        app, ["replay", ONE_CALL, "--client", "anthropic-python", "--client-mode", "both", "--width", "400"]
    )
    assert f"    {said}" in result.output  # the same sentence under the call
    assert result.exit_code == 0  # info: the run is the verdict, and it agrees


def test_both_where_they_agree_says_nothing_more() -> None:
    verdict = _verdict(mode="both")
    assert verdict["source"]["model_differs"] is None
    assert not [
        f for f in replay(ONE_CALL, clients="anthropic-python", client_mode="both").findings if f.code == "SD809"
    ]
    assert "model_differs" not in _verdict()["source"]  # auto at the pinned version: not compared


def test_another_installed_version_sets_the_model_against_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_model(monkeypatch, version="2.11.0")
    verdict = _verdict()
    assert verdict["version"] == "2.11.0"  # the version the model follows
    assert verdict["source"]["version"] == "2.12.0"  # the version that ran
    assert verdict["source"]["model_differs"] is None  # compared, and the same


def test_an_unknown_mode_is_one_line() -> None:
    result = CliRunner().invoke(app, ["replay", ONE_CALL, "--client", "anthropic-python", "--client-mode", "ran"])
    assert result.exit_code == 2
    assert "--client-mode: unknown client mode 'ran'; did you mean 'run'?" in result.output


def test_the_library_process_answers_on_its_own() -> None:
    """The process the run mode starts, as a user can start it: a JSON answer line per request line."""
    request = json.dumps({"profile": "anthropic-python", "path": ONE_CALL, "container": None, "max_memory": 2 << 30})
    done = subprocess.run(
        [sys.executable, "-m", "stream_doctor.clients.library"],
        input=f"{request}\n{request}\n".encode(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == 2 and answers[0] == answers[1]  # one import, the same answer on each capture
    assert answers[0]["installed"] == "2.12.0"
    assert answers[0]["turns"][0]["seen"] == [
        [[13, 37, 1910], "toolu_01f3H9Mn3GSMpLjVNa749dnK", "get_weather", INPUT, False]
    ]


def test_a_cassette_turn_is_run_on_its_own_body() -> None:
    # the body alone does not tell the driver the provider (detecting it failed): the replay's is passed
    report = replay(str(FIXTURES / "conversations/anthropic_result_missing.yaml"), clients="langchain")
    sources = [
        extra.data["langchain"]["source"]
        for number in sorted(report.extras)
        for extra in report.extras[number]
        if extra.key == "clients"
    ]
    assert len(sources) == 2
    assert {(s["mode"], s["note"]) for s in sources} == {("run", None)}
