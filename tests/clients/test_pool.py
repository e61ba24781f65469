"""``--client``'s library processes serve many captures (``clients/pool.py``): a run of ``check`` starts each
library once, its answers are those of one process per capture, and a capture that hangs, runs out of
memory or kills its process costs that capture only: the next one gets a fresh process.

The failing library is the real anthropic SDK behind a stand-in put first on the process's path: its
driver fails on the capture holding a marker comment, and runs the real one on the others.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stream_doctor.api import replay
from stream_doctor.cli import app
from stream_doctor.clients import pool as pool_module
from stream_doctor.clients import runs
from stream_doctor.clients.pool import library_pool
from tests.clients.test_client_runs import INPUT, ONE_CALL

pytestmark = [pytest.mark.slow]

#: the stand-in: the real SDK imported in its place, its driver wrapped to fail on the marked capture
STAND_IN = """
import os, sys, time
sys.path.remove(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
del sys.modules[__name__]
import anthropic  # the real SDK: the import below returns it
from stream_doctor.clients.library import anthropic_sdk
real = anthropic_sdk.run
def run(capture, frames, original=None):
    if original is not None and b": fail here" in original.data:
        FAIL
    return real(capture, frames, original)
run.__module__ = anthropic_sdk.__name__  # where the process reads the driver's HANDS_AT
anthropic_sdk.run = run
"""
FAILURES = {
    "hang": ("time.sleep(600)", "no answer within 90 s: stopped"),
    "memory": ("bytearray(8 << 30)", "MemoryError: "),
    "crash": (
        "os.kill(os.getpid(), 9)",
        "its process ended without an answer (killed by SIGKILL, likely out of memory; at most 2 GiB)",
    ),
}


def _captures(folder: Path, marked: int | None = None) -> list[str]:
    """Three copies of the one-call capture; ``marked``: the one whose stand-in run fails."""
    folder.mkdir()
    paths = []
    for number in range(3):
        path = folder / f"capture{number}.sse"
        shutil.copy(ONE_CALL, path)
        if number == marked:
            path.write_bytes(b": fail here\n\n" + path.read_bytes())
        paths.append(str(path))
    return paths


def _source(path: str) -> dict[str, Any]:
    report = replay(path, clients="anthropic-python")
    (call,) = report.calls
    (extra,) = [e for e in report.extras[report.number(call)] if e.key == "clients"]
    verdict: dict[str, Any] = extra.data["anthropic-python"]
    assert verdict["handoffs"][0]["input"] == INPUT  # the run's, or the model's for the failed capture
    return dict(verdict["source"])


def _counted(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Each library process started, a line in ``log`` (written from whichever process starts it)."""
    real = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> Any:
        with log.open("a") as file:
            file.write(f"{args[0][-1]}\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(pool_module.subprocess, "Popen", popen)


def test_a_check_over_several_captures_starts_each_library_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _captures(tmp_path / "captures")
    log = tmp_path / "started"
    _counted(monkeypatch, log)
    report = tmp_path / "report.json"
    clients = "--client=anthropic-python,langchain"
    result = CliRunner().invoke(app, ["check", str(tmp_path / "captures"), clients, "-j", "1", "-r", f"json:{report}"])
    assert result.exit_code in (0, 1), result.output
    assert log.read_text().splitlines() == ["stream_doctor.clients.library"] * 2  # one per library, not per capture
    checked = {Path(entry["path"]).name: entry["report"] for entry in json.loads(report.read_text())["captures"]}
    alone = tmp_path / "alone.json"  # each capture in a replay of its own: one process per capture
    for path in paths:
        done = CliRunner().invoke(app, ["replay", path, clients, "--format", "json", "-o", str(alone)])
        assert done.exit_code in (0, 1), done.output
        assert _sources(checked[Path(path).name]) == _sources(json.loads(alone.read_text())) != []


def _sources(report: dict[str, Any]) -> list[Any]:
    clients = [call["extras"].get("clients", {}) for call in report["calls"]]
    return [(name, verdict) for verdicts in clients for name, verdict in sorted(verdicts.items())]


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_capture_that_breaks_its_process_costs_that_capture_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    does, note = FAILURES[failure]
    stand_in = tmp_path / "stand_in" / "anthropic"
    stand_in.mkdir(parents=True)
    (stand_in / "__init__.py").write_text(STAND_IN.replace("FAIL", does))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "stand_in"), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setattr(runs, "RUN_SECONDS", 90.0)  # the real SDK's import (charged to the first) on a loaded machine
    monkeypatch.setattr(runs, "RUN_MEMORY", 2 << 30)
    first, second, third = _captures(tmp_path / "captures", marked=1)
    with library_pool() as pool:
        sources = [_source(first), _source(second), _source(third)]
        assert pool.started == 2  # the one the failure ended, and a fresh one for the third capture
    assert [source["mode"] for source in sources] == ["run", "model", "run"], sources
    assert sources[1]["note"] == f"the library could not be run ({note}); this is the model's answer"
