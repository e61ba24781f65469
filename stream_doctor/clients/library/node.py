"""The TypeScript libraries over a capture: ``harness.mjs`` (package data next to this module) under Node,
with the packages of a ``node_modules`` folder (``--node-modules DIR``, else the project's own harness,
``tests/clients/node/node_modules`` in a source checkout).

One long-lived ``node`` process per library process answers one request per turn of every capture file: the turn's response
body in the chunks the Python drivers' mock transport would return (``body_chunks``: the bytes as the
server sent them, else the frames written back as SSE), each with the frame it completes. It is
bounded twice: V8's heap by ``--max-old-space-size``, and every answer by the capture file's wall clock
(``begin``), after which the process is killed, the turn is one the model answers for, and the next
turn starts a fresh one. The harness resets everything of a run but the packages it imported.
"""

from __future__ import annotations

import base64
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson

from stream_doctor.capture.base import Capture, Frame, Pos
from stream_doctor.capture.limits import human
from stream_doctor.clients.library import LibraryMissing, Original, Outcome, Seen, body_chunks
from stream_doctor.util.exits import how_it_ended
from stream_doctor.values.events import MISSING

SCRIPT = Path(__file__).resolve().parent / "harness.mjs"
#: the project's own harness, where a source checkout has its packages installed (``npm ci``)
PROJECT_MODULES = Path(__file__).resolve().parents[3] / "tests" / "clients" / "node" / "node_modules"
#: the npm packages each TypeScript profile's run imports; the first is the one whose version is reported
PACKAGES: dict[str, tuple[str, ...]] = {
    "anthropic-typescript": ("@anthropic-ai/sdk",),
    "openai-node": ("openai",),
    "vercel-ai": ("ai", "@ai-sdk/openai-compatible", "@ai-sdk/anthropic"),
}
#: what a handoff is compared by (``LIBRARIES``' terms): "value" the input the tool gets, "text" the argument text
COMPARED: dict[str, str] = {"anthropic-typescript": "value", "openai-node": "text", "vercel-ai": "value"}
#: where the application sees a call handed over, during the stream and once it ended (the harness's events)
HANDS_AT: dict[str, tuple[str, str]] = {
    "anthropic-typescript": ("the SDK's contentBlock event (MessageStream)", "finalMessage() (block never stopped)"),
    "openai-node": (
        "the tool_calls.function.arguments.done event (ChatCompletionStream)",
        "finalChatCompletion() (the legacy function_call)",
    ),
    "vercel-ai": ("a tool-call part of streamText's fullStream", "a tool-call part once the body ended"),
}


class NodeRun:
    """``harness.mjs`` for one TypeScript profile: called like a Python driver (``LibraryRun``), once per turn."""

    def __init__(self, profile: str, node_modules: str | None, seconds: float, heap_mib: int) -> None:
        self.profile = profile
        self.modules = _modules(profile, node_modules)
        node = shutil.which("node")
        if node is None:
            raise LibraryMissing(f"Node.js (node) is not on PATH: install Node.js 20 or later to run {profile}")
        self.node = node
        self.installed = _version(self.modules / PACKAGES[profile][0])
        self.hands_at = HANDS_AT[profile]
        self.deadline = time.monotonic() + seconds
        self.heap_mib = heap_mib
        self.process: subprocess.Popen[bytes] | None = None

    def __call__(self, capture: Capture, frames: list[Frame], original: Original | None = None) -> Outcome:
        position: list[Pos | None] = [None]
        chunks = []
        for data in body_chunks(capture, frames, position, original):
            chunks.append([position[0].number if position[0] is not None else None, base64.b64encode(data).decode()])
        provider, events = _translated(capture, frames)
        request = {
            "client": self.profile,
            "provider": provider,
            "chunks": chunks,
            "tools": sorted({e.name for e in events if isinstance(getattr(e, "name", None), str)}),
            "ids": sorted({e.call_id for e in events if isinstance(getattr(e, "call_id", None), str)}),
        }
        answer = self._ask(orjson.dumps(request) + b"\n")
        if "harness_error" in answer:
            raise RuntimeError((str(answer["harness_error"]).splitlines() or ["(no message)"])[0][:200])
        seen = tuple(Seen(s["at"], s["id"], s["name"], s["value"] if s["runs"] else MISSING) for s in answer["seen"])
        if answer["error"] is None:
            return Outcome(seen, None, None)
        return Outcome(seen, answer["error"], answer["error_at"], answer["error_message"] or "")

    def begin(self, seconds: float) -> None:
        """A new capture file: its requests have ``seconds`` from now (the process, if alive, is kept)."""
        self.deadline = time.monotonic() + seconds

    def close(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.kill()
            process.communicate()

    def _ask(self, line: bytes) -> dict[str, Any]:
        """The harness's answer to one request line, read within the run's time; the process killed after it."""
        if self.process is None:
            self.process = subprocess.Popen(
                [self.node, f"--max-old-space-size={self.heap_mib}", str(SCRIPT), str(self.modules)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # the libraries' warnings; a broken run answers harness_error
            )
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(line)
            process.stdin.flush()
        except BrokenPipeError:
            pass  # it ended: reading says how
        out = b""
        while not out.endswith(b"\n"):
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([process.stdout], [], [], left)[0]:
                self.close()
                raise TimeoutError("Node gave no answer within the run's time: stopped")
            piece = os.read(process.stdout.fileno(), 1 << 16)
            if not piece:
                code = process.wait()
                self.process = None
                raise RuntimeError(
                    f"node ended without an answer ({how_it_ended(code)}; heap at most {human(self.heap_mib << 20)})"
                )
            out += piece
        answer: dict[str, Any] = orjson.loads(out)
        return answer


def _modules(profile: str, given: str | None) -> Path:
    """The ``node_modules`` folder holding every package ``profile`` needs; LibraryMissing naming the option."""
    modules = Path(given) if given is not None else PROJECT_MODULES
    missing = [name for name in PACKAGES[profile] if not (modules / name / "package.json").is_file()]
    if not missing:
        return modules
    where = f"{given} holds no" if given is not None else "no --node-modules DIR given, and no"
    install = f"`npm install {' '.join(PACKAGES[profile])}` in a project and pass its node_modules"
    raise LibraryMissing(f"{where} {', '.join(missing)}: {install} with --node-modules DIR to run it")


def _version(package: Path) -> str | None:
    from stream_doctor.util.opener import UnreadableFile, read_bytes

    try:  # the opener: a package.json that is a FIFO or a huge file is no version, never a hang
        version = orjson.loads(read_bytes(str(package / "package.json"))).get("version")
    except (OSError, UnreadableFile, orjson.JSONDecodeError, AttributeError):
        return None
    return version if isinstance(version, str) else None


def _translated(capture: Capture, frames: list[Frame]) -> tuple[str, list[Any]]:
    """The turn's provider (the capture's header, which ``--client``'s run sets, else detected) and events."""
    from stream_doctor.providers import detect

    named = capture.header.get("provider") if capture.header else None
    adapter, _ = detect(frames, named if isinstance(named, str) else None)
    translator = adapter.translator()
    events = [*translator.translate(frames), *translator.close()]
    return str(adapter.name), events
