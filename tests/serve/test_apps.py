"""The demo agents (``tests/serve/apps/``) against a loopback server playing the variants: each fixed agent runs
every call as the stream says under every meaning-keeping variant and runs none under a fault; each buggy agent
is caught; the fixed Chat agents survive the Chat quirks their SDK's decoder lets through.

The agents are real programs on the real SDKs (anthropic and openai in Python, ``@anthropic-ai/sdk`` and
``openai`` under Node with ``tests/clients/node``'s packages), run as a user runs them, with
``ANTHROPIC_BASE_URL``/``OPENAI_BASE_URL`` pointing at ``plan_server.PlanServer`` (the stand-in for ``stream-doctor
serve``'s server). What an agent ran is what it printed; what the stream says is what the reference accumulator
reads from the recorded body.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stream_doctor.api import replay
from stream_doctor.serve.variants import VARIANTS, variant_names
from stream_doctor.serve.wire import Plan, Recorded, as_recorded
from tests.clients.node_harness import HARNESS, node_executable
from tests.conftest import FIXTURES
from tests.serve.plan_server import PlanServer
from tests.serve.recorded import recorded_of

#: the example applications (Python and Node) against the loopback server; each example application run in child processes (60 s of CPU for 15 tests)
pytestmark = [pytest.mark.external, pytest.mark.slow]

APPS = Path(__file__).resolve().parent / "apps"
#: seconds one agent run may take (a Python SDK import alone takes seconds on a loaded machine)
TIMEOUT = 120
#: agent runs at once (each a process and a server of its own)
WORKERS = 4
_CHAT_TEXT = (
    b"".join(
        b"data: " + json.dumps(chunk).encode() + b"\n\n"
        for chunk in (
            {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Done."}}]},
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            },
        )
    )
    + b"data: [DONE]\n\n"
)


@dataclass(frozen=True)
class App:
    """One demo agent: how to start it, the capture its first turn serves and the text turn after it."""

    name: str
    file: str
    provider: str

    def command(self, bug: str | None, folder: Path) -> list[str]:
        flags = ["--bug", bug] if bug else []
        if self.file.endswith(".py"):
            return [sys.executable, str(APPS / self.file), *flags]
        return [node_executable(), str(folder / self.file), *flags]

    @property
    def recorded(self) -> Recorded:
        """The first turn, its events 20 ms apart (the fixtures record no times: recorded-pacing needs some)."""
        bare = recorded_of(FIXTURES / self.provider / "parallel_calls.sse", self.provider)
        events = tuple((0.02 * number, data) for number, (_, data) in enumerate(bare.events))
        return Recorded(bare.provider, bare.status, bare.headers, bare.body, events)

    @property
    def answer(self) -> Plan:
        if self.provider == "anthropic":
            return as_recorded(recorded_of(FIXTURES / "anthropic" / "text_answer.sse", "anthropic"))
        return Plan(200, (("content-type", "text/event-stream"),), ((0.0, _CHAT_TEXT),))


APPS_UNDER_TEST = (
    App("python-anthropic", "anthropic_agent.py", "anthropic"),
    App("python-openai", "openai_agent.py", "openai"),
    App("node-anthropic", "anthropic_agent.mjs", "anthropic"),
    App("node-openai", "openai_agent.mjs", "openai"),
)
BUGS = ("start-placeholder", "index-keyed", "parse-each-fragment", "first-parse")


@dataclass(frozen=True)
class Run:
    variant: str
    code: int
    ran: list[tuple[Any, ...]]
    stderr: str
    requests: int


@pytest.fixture(scope="module")
def node_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Node agents beside the harness's packages, as a user's project holds them (copied: Node resolves
    a symlinked file's imports from where it really lies)."""
    folder = tmp_path_factory.mktemp("node-agents")
    for name in ("common.mjs", "anthropic_agent.mjs", "openai_agent.mjs"):
        shutil.copy(APPS / name, folder / name)
    (folder / "node_modules").symlink_to(HARNESS / "node_modules")
    (folder / "package.json").write_text('{"type": "module"}')
    return folder


def _run(app: App, bug: str | None, variant: str, folder: Path, seed: int = 0) -> Run:
    plan = VARIANTS[variant].plan(app.recorded, seed)
    with PlanServer(plans=[plan, app.answer]) as server:
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "served",
            "OPENAI_BASE_URL": f"{server.url}/v1",
            "OPENAI_API_KEY": "served",
        }
        done = subprocess.run(
            app.command(bug, folder), env=env, capture_output=True, text=True, timeout=TIMEOUT, cwd=folder
        )
        requests = len(server.seen)
    ran = [(r["id"], r["ran"], r["input"]) for r in map(json.loads, done.stdout.splitlines()) if "ran" in r]
    return Run(variant, done.returncode, ran, done.stderr[-2000:], requests)


def _runs(app: App, bug: str | None, variants: list[str], folder: Path) -> list[Run]:
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(lambda variant: _run(app, bug, variant, folder), variants))


def _stream_says(recorded: Recorded) -> list[tuple[Any, ...]]:
    """Each call of the recorded body as the reference accumulator reads it: id, name, input."""
    calls = replay(recorded.body, provider=recorded.provider).stream.calls
    return [(c.call_id, c.name, c.arguments) for c in calls]


def _applicable(app: App, kind: str) -> list[str]:
    return [name for name in variant_names(kind) if VARIANTS[name].skipped(app.recorded) is None]  # type: ignore[arg-type]


@pytest.fixture
def folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    app: App = request.getfixturevalue("app")
    return request.getfixturevalue("node_folder") if app.file.endswith(".mjs") else tmp_path


@pytest.mark.parametrize("app", APPS_UNDER_TEST, ids=lambda app: app.name)
def test_the_fixed_agent_runs_every_call_as_the_stream_says_under_every_meaning_keeping_variant(
    app: App, folder: Path
) -> None:
    says = _stream_says(app.recorded)
    assert len(says) == 2
    for run in _runs(app, None, _applicable(app, "meaning"), folder):
        assert (run.variant, run.code, run.ran, run.requests) == (run.variant, 0, says, 2), run.stderr


@pytest.mark.parametrize("bug", BUGS)
@pytest.mark.parametrize("app", APPS_UNDER_TEST, ids=lambda app: app.name)
def test_each_buggy_agent_is_caught(app: App, bug: str, folder: Path) -> None:
    """Each bug shows where its kind shows: a wrong input or id under every byte in its own read, and the
    agent that runs on the first buffer that parses, under a cut before the call's completion, runs a call
    the stream never completed (under byte-per-read it ran the right input, only too early)."""
    says = _stream_says(app.recorded)
    if bug != "first-parse":
        run = _run(app, bug, "byte-per-read", folder)
        assert run.code == 0 and run.ran != says and len(run.ran) == len(says), run.stderr
        return
    early, fixed = _run(app, bug, "cut-before-completion", folder), _run(app, None, "cut-before-completion", folder)
    # it ran the call (the calls, on Chat, where the finish completes them all) the stream never completed
    assert early.ran and early.ran == says[: len(early.ran)], early.stderr
    # every agent goes on with what it ran (the Python and the Node ones alike): its result reaches the server
    assert (early.code, early.requests) == (0, 2), early.stderr
    assert fixed.ran == [] and fixed.code != 0, fixed.stderr  # the near miss: the fixed twin runs nothing


@pytest.mark.parametrize("app", APPS_UNDER_TEST, ids=lambda app: app.name)
def test_the_fixed_agent_runs_no_call_under_a_fault(app: App, folder: Path) -> None:
    for run in _runs(app, None, _applicable(app, "fault"), folder):
        assert (run.variant, run.ran) == (run.variant, []), run.stderr
        assert run.code != 0 and run.requests == 1, run.variant  # it stopped, and said so


@pytest.mark.parametrize("app", [a for a in APPS_UNDER_TEST if a.provider == "openai"], ids=lambda app: app.name)
def test_the_fixed_chat_agent_survives_the_chat_quirks_its_sdk_lets_through(app: App, folder: Path) -> None:
    """What the quirks show of a stack: the fixed agent's own accumulation survives ids and names repeated,
    indices from 1 and whole calls without an index; the SDK's SSE decoder itself fails on a relay's
    ``data: :ping`` (openai-python and openai-node parse every data line as JSON), before the agent sees it."""
    says = _stream_says(app.recorded)
    runs = {run.variant: run for run in _runs(app, None, _applicable(app, "quirk"), folder)}
    assert set(runs) == set(variant_names("quirk"))
    for name in ("index-from-one", "repeated-id-and-name", "whole-calls-without-index"):
        assert (name, runs[name].code, runs[name].ran) == (name, 0, says), runs[name].stderr
    assert runs["data-ping"].code != 0 and runs["data-ping"].ran == []
