"""docs/debugging-empty-input.md, run: every ``$`` command of its console blocks, its output checked.

The commands run in order in a scratch folder holding the repository's ``fixtures/`` and
``docs/``, through bash, with this environment's ``stream-doctor`` and ``python`` first on the
PATH. A local server streams the repository's captures in place of the Anthropic API: the page's
``https://api.anthropic.com`` and port 8080 are swapped for it and a free port in the commands,
and back in their output. A command ending in ``&`` runs in the background (the recording proxy)
and is stopped at the end; its first line of output is checked.

Output is matched line by line: a line ``…`` skips any number of lines, and ``…`` inside a line
stands for any text.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.record.upstream import FakeUpstream

#: the documented session, the recording proxy before a loopback upstream included
pytestmark = [pytest.mark.external]

DOC = ROOT / "docs/debugging-empty-input.md"
API = "https://api.anthropic.com"
PORT = "8080"


@dataclass
class Command:
    line: int  # where it is in the page
    text: str
    expected: list[str] = field(default_factory=list)


def commands(markdown: str) -> list[Command]:
    found: list[Command] = []
    block = False
    for number, line in enumerate(markdown.splitlines(), 1):
        if line.startswith("```"):
            block = line.strip() == "```console"
            continue
        if not block:
            continue
        if line.startswith("$ "):
            found.append(Command(number, line[2:]))
        elif found:
            found[-1].expected.append(line.rstrip())
    return found


def matches(expected: list[str], actual: list[str]) -> str | None:
    """None when ``actual`` has the ``expected`` lines (with ``…`` as above), else why not."""

    def search(e: int, a: int) -> bool:
        if e == len(expected):
            return a == len(actual)
        if expected[e] == "…":
            return any(search(e + 1, start) for start in range(a, len(actual) + 1))
        pattern = ".*".join(re.escape(part) for part in expected[e].split("…"))
        return a < len(actual) and re.fullmatch(pattern, actual[a]) is not None and search(e + 1, a + 1)

    return None if search(0, 0) else "expected:\n" + "\n".join(expected) + "\n\ngot:\n" + "\n".join(actual)


def choose(body: bytes) -> bytes:
    """Turn 1 streams the get_weather call; once a request carries its result, the answer."""
    last = json.loads(body)["messages"][-1]["content"]
    answered = isinstance(last, list) and any(block.get("type") == "tool_result" for block in last)
    return (
        ROOT / ("fixtures/anthropic/text_answer.sse" if answered else "fixtures/anthropic/one_call.sse")
    ).read_bytes()


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def test_the_page_has_every_case_it_promises() -> None:
    found = " ".join(c.text for c in commands(DOC.read_text()))
    assert "--executed" in found and "--executions" in found and ">> chunks.jsonl" in found  # raw stream, SDK log
    assert "--record" in found and "stream-doctor record" in found  # recorded, both ways
    assert "anthropic_echo_empty_input.yaml" in found  # several turns
    assert "--client" in found  # which reading of the stream gives {}
    assert "--format html" in found  # the whole run on one page


@pytest.mark.slow  # every command of the page run through bash, the CLI and the proxy in child processes (30 s of CPU)
def test_every_command_of_the_walkthrough(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    pytest.importorskip("aiohttp")
    for name in ("fixtures", "docs"):
        (tmp_path / name).symlink_to(ROOT / name)
    background: list[subprocess.Popen[str]] = []
    port = free_port()
    with FakeUpstream(b"", choose=choose) as upstream:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(ROOT),
            "COLUMNS": "100",
            "NO_COLOR": "1",
            "TERM": "dumb",
            "ANTHROPIC_API_KEY": "sk-ant-walkthrough",
            "ANTHROPIC_BASE_URL": upstream.url,
        }
        env.pop("FORCE_COLOR", None)

        def local(text: str) -> str:
            return text.replace(API, upstream.url).replace(f"127.0.0.1:{PORT}", f"127.0.0.1:{port}")

        def public(text: str) -> str:
            return text.replace(upstream.url, API).replace(f"127.0.0.1:{port}", f"127.0.0.1:{PORT}")

        try:
            for command in commands(DOC.read_text()):
                where = f"{DOC.name}:{command.line}: $ {command.text}"
                if command.text.endswith(" &"):
                    process = subprocess.Popen(
                        ["bash", "-c", "exec " + local(command.text[:-2])],
                        cwd=tmp_path,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        text=True,
                    )
                    background.append(process)
                    assert process.stdout is not None
                    output = [public(process.stdout.readline().rstrip("\n"))]
                else:
                    done = subprocess.run(
                        ["bash", "-c", local(command.text)],
                        cwd=tmp_path,
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=120,
                    )
                    output = (
                        public(done.stdout + done.stderr).rstrip("\n").split("\n") if done.stdout + done.stderr else []
                    )
                    assert done.returncode in (0, 1), f"{where}\nexit {done.returncode}\n" + "\n".join(output)
                    output = [line.rstrip() for line in output]
                problem = matches(command.expected, output)
                assert problem is None, f"{where}\n{problem}"
        finally:
            for process in background:
                process.terminate()
                process.wait(10)
