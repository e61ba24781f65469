"""The server is language-agnostic: the TypeScript SDKs of the project's Node harness (@anthropic-ai/sdk,
openai), pointed at it by their base-URL variables, run a correct loop judged clean and a buggy one
(the call run at its start event) judged with the empty-input finding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.clients.node_harness import HARNESS, node_executable
from tests.conftest import FIXTURES

#: Node: an agent run against the loopback server
pytestmark = [pytest.mark.external]

pytest.importorskip("aiohttp")

AGENT = Path(__file__).resolve().parent / "node_agent.mjs"
CASES = {
    "anthropic": (str(FIXTURES / "conversations/anthropic_echo_empty_input.yaml"), "ANTHROPIC", ""),
    "openai": (str(FIXTURES / "conversations/openai_gzip_two_turns.yaml"), "OPENAI", "/v1"),
}
STREAMED = {
    "anthropic": ("write_file", "notes/todo.md"),
    "openai": ("get_weather", "Nairobi, Kenya"),
}


@pytest.mark.parametrize("sdk", sorted(CASES))
@pytest.mark.parametrize("mode", ["fixed", "buggy"])
def test_the_typescript_sdks_are_judged(stream_doctor_server: Any, sdk: str, mode: str) -> None:
    from stream_doctor.serve.load import load_script

    node = node_executable()
    capture, variable, suffix = CASES[sdk]
    request = load_script(capture).turns[0].request
    assert request is not None
    server = stream_doctor_server(capture)
    environment = {
        **os.environ,
        f"{variable}_BASE_URL": server.url + suffix,
        f"{variable}_API_KEY": "stream-doctor-serve",
    }
    done = subprocess.run(
        [node, str(AGENT), str(HARNESS / "node_modules"), sdk, mode, json.dumps(request["body"])],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    ((name, given),) = json.loads(done.stdout)
    assert name == STREAMED[sdk][0]
    verdicts = [(v.severity.label, v.code) for judged in server.stop() for v in judged.verdicts]
    if mode == "fixed":
        assert STREAMED[sdk][1] in given.values() and verdicts == []
    else:
        assert given == {} and verdicts == [("error", "SD608")]


APPS = Path(__file__).resolve().parent / "apps"
ROOT = APPS.parents[2]


@pytest.mark.slow  # the CLI and each Node demo agent under --matrix in child processes, four times (10 s of CPU)
@pytest.mark.parametrize("agent", ["anthropic_agent.mjs", "openai_agent.mjs"])
@pytest.mark.parametrize("bug", ["start-placeholder", None])
def test_a_node_demo_agent_run_in_place_under_the_matrix_has_its_follow_up_judged(agent: str, bug: str | None) -> None:
    """``serve --matrix -- node tests/serve/apps/AGENT.mjs``, as the docs run the Python agents: the agent
    finds its SDK (the harness's, run in place), streams turn 1 and sends its follow-up, which is judged: the
    buggy twin echoes the start event's ``{}`` (SD608, the run fails), the fixed twin each input whole."""
    provider = "anthropic" if agent.startswith("anthropic") else "openai"
    capture = str(FIXTURES / provider / "parallel_calls.sse")
    command = [sys.executable, "-m", "stream_doctor", "serve", capture, "--matrix", "--vary", "event-per-read"]
    done = subprocess.run(
        [*command, "--format", "json", "--", node_executable(), str(APPS / agent), *(["--bug", bug] if bug else [])],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=120,
    )
    ((row,),) = [json.loads(done.stdout)["rows"]]
    assert row["exit"] == 1 and not row["timed_out"], done.stderr  # exit 1: the follow-up past the capture is 400
    assert any("request 2 goes on past the capture's last turn" in v for v in row["verdicts"]), row["verdicts"]
    outcomes = {(call["name"], call["outcome"], call["rule"]) for call in row["calls"]}
    if bug:
        assert outcomes == {("get_weather", "another-input", "SD608"), ("get_local_time", "another-input", "SD608")}
        assert done.returncode == 1 and row["failing"]
    else:
        assert outcomes == {("get_weather", "right-input", None), ("get_local_time", "right-input", None)}
        assert done.returncode == 0 and not row["failing"]
