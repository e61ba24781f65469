"""``--client``'s run mode: the real library a profile models, run over the capture's own bytes in a
process of its own, its outcome put in the model's terms (``Handoff``, ``ClientError``) so the SD8xx
rules and every reporter read one record whichever answered.

One process per (capture file, library), started when the capture's report is built (``python -m
stream_doctor.clients.library``; a session's files, ``RUNNING`` processes at once), each bounded: ``RUN_SECONDS`` for the import and every
turn, ``RUN_MEMORY`` of address space; a TypeScript library runs in that process's child ``node``
(``library/node.py``), its heap ``NODE_HEAP_MIB``, stopped before the process's own time is up. A library that is not installed, cannot be driven at the version
installed, hangs, or runs out of memory leaves the model's answer and a one-line note
(``Provenance.note``). ``--client-mode``: ``auto`` runs the library when it imports, else the model;
``run`` requires it (a library that is not installed is a RunError); ``model`` never runs it; ``both``
runs it and, where the model differs on a call, an info finding SD809 says so (as ``auto`` does when the version installed is
not the one the profile follows).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.capture.base import Pos
from stream_doctor.capture.limits import human
from stream_doctor.clients.base import ClientError, Handoff, Profile, Provenance, parse_json
from stream_doctor.util.exits import how_it_ended
from stream_doctor.values.events import MISSING
from stream_doctor.values.options import ClientMode as Mode

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
    from stream_doctor.clients.compare import ClientReview

#: the time one library's process has for its import and every turn of the capture: a start-up takes
#: 1 to 6 s of CPU (docs/replay.md states each one's), which a loaded machine stretches tenfold
RUN_SECONDS = 120.0
#: the address space one library's process may map (the largest, LiteLLM, maps about 1 GiB)
RUN_MEMORY = 3 << 30
#: the library processes running at once: a capture with ``--client all`` starts each of its provider's
#: libraries together; a session of many files starts the rest as those answer
RUNNING = 8
#: V8's heap for a TypeScript library's run under Node, in MiB (the AI SDK, the largest, uses under 100)
NODE_HEAP_MIB = 1024


class RunRequired(RuntimeError):
    """``--client-mode run`` named a library that cannot be run here; the message says why."""


class LibraryRuns:
    """The library runs of one replay: one process per (library, capture file), at most ``RUNNING`` at
    once (the first ones started together), each answered once, and reviewed a turn at a time."""

    def __init__(
        self,
        files: dict[str, str | None],
        container: str | None,
        provider: str,
        profiles: tuple[Profile, ...],
        mode: Mode,
        node_modules: str | None = None,
        only: int | None = None,
    ) -> None:
        """``files``: each capture file of the replay, by the path its turns carry (``<stdin>``, a session's
        member), and the file a library's process reads for it (None: none, e.g. a capture given as bytes);
        ``only``: the one turn to drive (the live proxy's, once its exchange is written), else every turn."""
        self.mode = mode
        self.start = (container, provider, node_modules, only)
        self.files = files
        self.pending: list[tuple[str, str]] = []  # (profile, capture path) not started yet, in order
        self.started: dict[tuple[str, str], tuple[subprocess.Popen[bytes], float]] = {}
        self.answers: dict[tuple[str, str], dict[str, Any]] = {}
        if mode == "model":
            return
        for name, file in files.items():
            for profile in profiles:
                if compared(profile.name) is None or not profile.applies_to(provider):
                    continue
                if file is None or not os.path.isfile(file):
                    self.answers[profile.name, name] = {"unrun": "the capture is not a file its process can read"}
                    continue
                self.pending.append((profile.name, name))
        self._start_more()

    def _start_more(self) -> None:
        while self.pending and len(self.started) < RUNNING:
            key = self.pending.pop(0)
            file = self.files[key[1]]
            assert file is not None
            self.started[key] = (_start(key[0], file, *self.start), time.monotonic())

    def answer(self, profile: Profile, path: str) -> dict[str, Any] | None:
        """The library's answer on the capture file ``path`` (``clients/library/__main__.py``), once it came or
        its bound ran out; None: not run (the model's profile, ``--client-mode model``)."""
        key = (profile.name, path)
        while key not in self.answers and (key in self.started or key in self.pending):
            if key in self.pending:  # asked for before its turn to start: room is made, oldest first
                if len(self.started) >= RUNNING:
                    oldest = next(iter(self.started))
                    self.answers[oldest] = _collect(*self.started.pop(oldest))
                self.pending.remove(key)
                self.pending.insert(0, key)
            else:
                self.answers[key] = _collect(*self.started.pop(key))
            self._start_more()
        answer = self.answers.get(key)
        if answer is not None and self.mode == "run" and "missing" in answer:
            raise RunRequired(f"--client-mode run: {answer['missing']}")
        return answer

    def close(self) -> None:
        """Stop every process whose answer was never asked for (the replay failed before)."""
        self.pending.clear()
        for process, _ in self.started.values():
            _stop(process)
        self.started.clear()

    def review(
        self,
        stream: AccumulatedStream,
        turn: int,
        profile: Profile,
        handoffs: tuple[Handoff, ...],
        error: ClientError | None,
    ) -> ClientReview:
        """The review of ``profile`` on this turn (the ``turn``-th of its capture file): the library's run when it answered, else the model's
        (``handoffs``, ``error``) with the reason; a run also set against the model when asked."""
        from stream_doctor.clients.base import modelled
        from stream_doctor.clients.compare import review

        if profile.kind != "library":
            return review(stream, profile, handoffs, error)
        answer = self.answer(profile, stream.capture.path)
        turns = answer.get("turns") if answer is not None else None
        ran = turns[turn] if turns is not None and turn < len(turns) else None
        if answer is None or ran is None or "failed" in ran:
            why = _why_model(profile, self.mode, ran if ran is not None else answer)
            return review(stream, profile, handoffs, error, modelled(profile, why))
        installed = answer.get("installed")
        written_back = "fed the frames written back as SSE (the capture holds no response bytes)"
        note = written_back if ran["written_back"] else None
        run_handoffs, run_error = outcome(stream, profile, ran, (answer["hands_at"], answer["hands_after"]))
        provenance = Provenance("run", profile.library, installed, note)
        reviewed = review(stream, profile, run_handoffs, run_error, provenance)
        if self.mode != "both" and installed == profile.version:
            return reviewed
        from dataclasses import replace

        from stream_doctor.clients.extras import model_differs

        model = review(stream, profile, handoffs, error)
        return replace(reviewed, provenance=replace(provenance, model_differs=model_differs(reviewed, model)))


def _why_model(profile: Profile, mode: Mode, answer: dict[str, Any] | None) -> str:
    """The one-line note that says why the model answers for a library."""
    if mode == "model":
        return "--client-mode model"
    if answer is None:
        return "no library to run; this is the model"
    if "missing" in answer and answer.get("package"):
        return f"the library is not installed: `pip install {answer['package']}` to run it"
    if "missing" in answer:
        return str(answer["missing"])
    if "unrun" in answer:
        return str(answer["unrun"])
    return f"the library could not be run ({answer.get('failed', 'no answer')}); this is the model's answer"


def outcome(
    stream: AccumulatedStream, profile: Profile, ran: dict[str, Any], hands: tuple[str, str]
) -> tuple[tuple[Handoff, ...], ClientError | None]:
    """A library's answer for one turn as the model's record: each call it handed, matched to the
    reference calls it stands for (``_match``), and what it raised. ``hands``: where the application
    sees a call handed over, during the stream and once it ended (the driver's ``HANDS_AT``)."""
    by = compared(profile.name)
    open_calls = [call for call in stream.calls if not call.server_side]
    used: set[int] = set()
    handoffs = []
    for at, call_id, name, value, invalid in ran["seen"]:
        text = value if isinstance(value, str) and by != "value" else None
        calls = _match(open_calls, used, call_id, name, text)
        handed = MISSING if invalid else parse_json(text) if text is not None else value
        place = Pos(*at) if at is not None else None
        when = hands[0] if place is not None else hands[1]
        handoffs.append(Handoff(calls, call_id, name, text, handed, place, when, invalid))
    if ran["error"] is None:
        return tuple(handoffs), None
    pos = Pos(*ran["error_at"]) if ran["error_at"] is not None else None
    sent = any(
        m.error is not None and (pos is None or m.error.pos.number <= pos.number) for m in stream.messages
    )  # an exception on the provider's own error event is what the client should do
    message = ran["message"] or "(no message)"
    return tuple(handoffs), ClientError(pos, ran["error"], message, None, sent)


def _match(calls: list[ToolCall], used: set[int], call_id: Any, name: Any, text: str | None) -> tuple[int, ...]:
    """The reference calls a library's handoff stands for: consecutive unused calls whose argument texts
    joined are the text it holds (a library that folds calls into one hands their joined fragments, with
    one of their ids); else the unused one with its id, else its name, else the next."""
    unused = [call for call in calls if call.ordinal not in used]
    folded = _folded(unused, text) if text else None
    if folded is not None:
        used.update(folded)
        return folded
    for found in (
        [c for c in unused if call_id is not None and c.call_id == call_id],
        [c for c in unused if name and c.name == name],
        unused,
    ):
        if found:
            used.add(found[0].ordinal)
            return (found[0].ordinal,)
    return ()


def _folded(unused: list[ToolCall], text: str) -> tuple[int, ...] | None:
    """Two or more consecutive calls whose argument texts joined are ``text``; None when none are."""
    for start, first in enumerate(unused):
        joined = first.raw_arguments
        if not joined or not text.startswith(joined):
            continue
        held = [first.ordinal]
        for call in unused[start + 1 :]:
            if len(joined) >= len(text) or not text.startswith(call.raw_arguments, len(joined)):
                break
            held.append(call.ordinal)
            joined += call.raw_arguments
        if joined == text and len(held) > 1:
            return tuple(held)
    return None


def compared(profile: str) -> str | None:
    """What the library run of ``profile`` is compared by (``LIBRARIES``' third field); None: no library runs it."""
    from stream_doctor.clients.library import LIBRARIES
    from stream_doctor.clients.library.node import COMPARED

    return LIBRARIES[profile][2] if profile in LIBRARIES else COMPARED.get(profile)


def _start(
    profile: str, path: str, container: str | None, provider: str, node_modules: str | None, only: int | None
) -> subprocess.Popen[bytes]:
    root = str(Path(__file__).resolve().parents[2])  # this copy of stream_doctor, whatever the path says
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    request = {
        "profile": profile,
        "path": os.path.abspath(path),
        "container": container,
        "provider": provider,
        "max_memory": RUN_MEMORY,
        "seconds": RUN_SECONDS - 5,  # a Node run stops itself first, so no node process outlives it
        "node_heap": NODE_HEAP_MIB,
        "node_modules": os.path.abspath(node_modules) if node_modules is not None else None,
        "only": only,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "stream_doctor.clients.library", orjson.dumps(request).decode()],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def _collect(process: subprocess.Popen[bytes], started: float) -> dict[str, Any]:
    """The process's answer, or why there is none (stopped at its time bound, or ended without one)."""
    assert process.stdout is not None
    try:
        out, _ = process.communicate(timeout=max(0.1, started + RUN_SECONDS - time.monotonic()))
    except subprocess.TimeoutExpired:
        _stop(process)
        return {"failed": f"no answer within {RUN_SECONDS:g} s: stopped"}
    try:
        answer = orjson.loads(out)
    except orjson.JSONDecodeError:
        code = process.returncode
        return {"failed": f"its process ended without an answer ({how_it_ended(code)}; at most {human(RUN_MEMORY)})"}
    return answer if isinstance(answer, dict) else {"failed": "an answer that is not an object"}


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.communicate()
