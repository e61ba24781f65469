"""The server is language-agnostic: the TypeScript SDKs of the project's Node harness (@anthropic-ai/sdk,
openai), pointed at it by their base-URL variables, run a correct loop judged clean and a buggy one
(the call run at its start event) judged with the empty-input finding."""

from __future__ import annotations

import json
import os
import subprocess
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
