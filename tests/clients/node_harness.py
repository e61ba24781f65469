"""The one way the tests call ``stream_doctor/clients/library/harness.mjs`` (the harness ``--client`` runs,
with the packages of ``tests/clients/node/node_modules``): a long-lived Node process per test
session that answers one JSON line per request line, so a hypothesis example does not wait for Node
to start; every answer is awaited with a timeout, and the process is killed at teardown.

Without Node or the harness's installed packages a test skips with the command to run, except under
``CI=true``, where it fails: a broken CI must not skip it silently (``.ci/run`` installs both).
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import IO, Any, Iterable

import pytest

from stream_doctor.capture.base import Pos
from stream_doctor.clients.base import ClientError, Handoff
from stream_doctor.clients.library.node import COMPARED, SCRIPT

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).resolve().parent / "node"
#: the TypeScript profiles and what a handoff is compared by: "value" the input the tool gets, "text" the argument text
CLIENTS = COMPARED
#: seconds one answer may take (a run is milliseconds; the first one loads the packages)
TIMEOUT = 60.0


def node_executable() -> str:
    """The node executable, with the harness's packages installed; else skip (fail under CI=true)."""
    node = shutil.which("node")
    installed = (HARNESS / "node_modules" / ".package-lock.json").is_file()
    if node is None or not installed:
        missing = "Node.js (node) is not on PATH" if node is None else "the harness's packages are not installed"
        message = f"{missing}: install Node.js 20 or later and run `npm ci` in {HARNESS.relative_to(ROOT)}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (.ci/run does both)")
        pytest.skip(message)
    return node


class NodeHarness:
    """``harness.mjs`` running under Node; ``run`` sends one request and returns its answer."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.process: subprocess.Popen[str] | None = None
        self.answers: queue.Queue[str | None] = queue.Queue()

    def _start(self) -> subprocess.Popen[str]:
        self.answers = queue.Queue()
        process = subprocess.Popen(
            [self.node, str(SCRIPT), str(HARNESS / "node_modules")],
            cwd=HARNESS,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # the libraries' warnings; a broken run answers harness_error
            text=True,
            encoding="utf-8",
        )
        assert process.stdout is not None
        threading.Thread(target=_read_lines, args=(process.stdout, self.answers), daemon=True).start()
        return process

    def run(
        self,
        client: str,
        provider: str,
        chunks: Iterable[tuple[Pos | None, bytes]],
        tools: Iterable[str],
        ids: Iterable[str],
    ) -> dict[str, Any]:
        """What ``client``'s library hands over and raises when the body arrives as ``chunks`` (each
        with the frame last begun in it)."""
        request = {
            "client": client,
            "provider": provider,
            "chunks": [
                [pos.number if pos is not None else None, base64.b64encode(data).decode()] for pos, data in chunks
            ],
            "tools": sorted(set(tools)),
            "ids": sorted(set(ids)),
        }
        if self.process is None or self.process.poll() is not None:
            self.process = self._start()
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        try:
            line = self.answers.get(timeout=TIMEOUT)
        except queue.Empty:
            self.close()
            pytest.fail(f"harness.mjs gave no answer within {TIMEOUT:.0f} s for {client}")
        if line is None:
            code = self.process.wait(timeout=TIMEOUT)
            self.process = None
            pytest.fail(f"harness.mjs ended (exit code {code}) before answering {client}")
        answer: dict[str, Any] = json.loads(line)
        assert "harness_error" not in answer, answer["harness_error"]
        return answer

    def close(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def library_outcome(answer: dict[str, Any], positions: bool = True) -> dict[str, Any]:
    """What the library did, in the terms ``profile_outcome`` states a profile's run in: each call
    handed (the frame read then, its id, name, and the value the tool gets or "not run") and the
    exception's class and frame (``positions`` False: frames left out, for arbitrary byte cuts)."""
    seen = [
        (s["at"] if positions else None, s["id"], s["name"], s["value"] if s["runs"] else "not run")
        for s in answer["seen"]
    ]
    return {"seen": seen, "error": answer["error"], "error_at": answer["error_at"] if positions else None}


def profile_outcome(
    handoffs: tuple[Handoff, ...], error: ClientError | None, client: str, positions: bool = True
) -> dict[str, Any]:
    """A profile's run (``clients.run``) in the terms of ``library_outcome``."""
    mode = CLIENTS[client]
    seen = [
        (
            h.at.number if h.at is not None and positions else None,
            h.call_id,
            h.name,
            "not run" if h.invalid else (h.arguments if mode == "text" else h.input),
        )
        for h in handoffs
    ]
    at = error.pos.number if error is not None and error.pos is not None and positions else None
    return {"seen": seen, "error": error.exception if error is not None else None, "error_at": at}


def _read_lines(stream: IO[str], answers: queue.Queue[str | None]) -> None:
    for line in stream:
        answers.put(line)
    answers.put(None)  # the process ended
