"""``--client``'s run mode: the real library a profile models, run over the capture's own bytes in a
process of its own, its outcome put in the model's terms (``Handoff``, ``ClientError``) so the SD8xx
rules and every reporter read one record whichever answered.

Each library runs in a process of its own (``python -m stream_doctor.clients.library``), kept by a
``LibraryPool`` (``clients/pool.py``) for the run (a ``check`` worker, the live proxy) or the replay,
and fed one capture file at a time: started on the first capture that needs it, at most ``RUNNING``
at once. Every bound is per capture file: ``RUN_SECONDS`` for its turns (the first one's include the
import), ``RUN_MEMORY`` of address space; a TypeScript library runs in that process's child ``node``
(``library/node.py``), its heap ``NODE_HEAP_MIB``, stopped before the capture's own time is up.
A library that is not installed, cannot be driven at the version
installed, hangs, or runs out of memory leaves the model's answer and a one-line note
(``Provenance.note``). ``--client-mode``: ``auto`` runs the library when it imports, else the model;
``run`` requires it (a library that is not installed is a RunError); ``model`` never runs it; ``both``
runs it and, where the model differs on a call, an info finding SD809 says so (as ``auto`` does when the version installed is
not the one the profile follows).
"""

from __future__ import annotations

import os
import time
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
    from stream_doctor.clients.pool import LibraryPool, Worker

#: the time one library's process has for every turn of a capture file (the first one's include its import): a start-up takes
#: 1 to 6 s of CPU (docs/replay.md states each one's), which a loaded machine stretches tenfold
RUN_SECONDS = 120.0
#: the address space one library's process may map on any capture (the largest, LiteLLM, maps about 1 GiB)
RUN_MEMORY = 3 << 30
#: the library processes alive at once: a capture with ``--client all`` feeds each of its provider's
#: libraries together; a session of many files feeds each library its files in turn
RUNNING = 8
#: V8's heap for a TypeScript library's run under Node, in MiB (the AI SDK, the largest, uses under 100)
NODE_HEAP_MIB = 1024


class RunRequired(RuntimeError):
    """``--client-mode run`` named a library that cannot be run here; the message says why."""


class LibraryRuns:
    """The library runs of one replay: each (library, capture file) sent to that library's process in the
    pool (``clients/pool.py``: the run's, else one for this replay), one capture per library at a time,
    at most ``RUNNING`` libraries at once (the first ones started together), each answered once, and
    reviewed a turn at a time."""

    def __init__(
        self,
        files: dict[str, str | None],
        container: str | None,
        provider: str,
        profiles: tuple[Profile, ...],
        mode: Mode,
        node_modules: str | None = None,
        only: int | None = None,
        pool: LibraryPool | None = None,
    ) -> None:
        """``files``: each capture file of the replay, by the path its turns carry (``<stdin>``, a session's
        member), and the file a library's process reads for it (None: none, e.g. a capture given as bytes);
        ``only``: the one turn to drive (the live proxy's, once its exchange is written), else every turn;
        ``pool``: the processes to use (the live proxy's), else the run's (``library_pool``), else its own."""
        from stream_doctor.clients.pool import LibraryPool, shared

        self.mode = mode
        self.start = (container, provider, node_modules, only)
        self.files = files
        self.pending: list[tuple[str, str]] = []  # (profile, capture path) not started yet, in order
        self.started: dict[tuple[str, str], tuple[Any, float]] = {}  # a Worker (``_start``), when it was sent
        self.answers: dict[tuple[str, str], dict[str, Any]] = {}
        found = pool or shared()
        self.own = found is None  # a pool that lives for this replay (no process until one is asked for)
        self.pool = found or LibraryPool(RUNNING)
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
        """Send the next pending captures whose library is free, while fewer than ``RUNNING`` run."""
        for key in list(self.pending):
            if len(self.started) >= RUNNING:
                return
            if self._busy(key[0]) is None:
                self.pending.remove(key)
                file = self.files[key[1]]
                assert file is not None
                self.started[key] = (_start(key[0], file, *self.start, self.pool), time.monotonic())

    def _busy(self, profile: str) -> tuple[str, str] | None:
        """The capture ``profile``'s library is running now, if any."""
        return next((key for key in self.started if key[0] == profile), None)

    def answer(self, profile: Profile, path: str) -> dict[str, Any] | None:
        """The library's answer on the capture file ``path`` (``clients/library/__main__.py``), once it came or
        its bound ran out; None: not run (the model's profile, ``--client-mode model``)."""
        key = (profile.name, path)
        while key not in self.answers and (key in self.started or key in self.pending):
            if key in self.pending:  # asked for before its turn to start: room is made, its library's first
                making = self._busy(key[0]) or (next(iter(self.started)) if len(self.started) >= RUNNING else None)
                if making is not None:
                    self.answers[making] = _collect(*self.started.pop(making))
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
        """Stop every process whose answer was never asked for (the replay failed before), and the
        replay's own pool."""
        self.pending.clear()
        for worker, _ in self.started.values():
            _stop(worker)
        self.started.clear()
        if self.own:
            self.pool.close()

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
    profile: str,
    path: str,
    container: str | None,
    provider: str,
    node_modules: str | None,
    only: int | None,
    pool: LibraryPool,
) -> Worker:
    """``path`` sent to ``profile``'s library process in ``pool`` (started now if it has none idle)."""
    modules = os.path.abspath(node_modules) if node_modules is not None else None
    worker = pool.take((profile, modules))
    request = {
        "profile": profile,
        "path": os.path.abspath(path),
        "container": container,
        "provider": provider,
        "max_memory": RUN_MEMORY,
        "seconds": RUN_SECONDS - 5,  # a Node run stops itself first, so no node process outlives it
        "node_heap": NODE_HEAP_MIB,
        "node_modules": modules,
        "only": only,
    }
    worker.send(request)
    return worker


def _collect(worker: Worker, started: float) -> dict[str, Any]:
    """The worker's answer on the capture it was sent ``started`` (the import charged to its first), or
    why there is none (stopped at its time bound, or ended without one: the next capture gets a fresh one)."""
    out = worker.answer(started + RUN_SECONDS)
    if out is None:
        code = worker.returncode()
        if worker.timed_out:
            return {"failed": f"no answer within {RUN_SECONDS:g} s: stopped"}
        return {"failed": f"its process ended without an answer ({how_it_ended(code)}; at most {human(RUN_MEMORY)})"}
    try:
        answer = orjson.loads(out)
    except orjson.JSONDecodeError:
        worker.stop()
        return {"failed": "an answer that is not JSON"}
    if not isinstance(answer, dict):
        worker.stop()
        return {"failed": "an answer that is not an object"}
    if answer.pop("spent", False):
        worker.stop()  # its library may be hurt by what the capture did (a MemoryError): the next gets a fresh one
    else:
        worker.pool.give(worker)
    return answer


def _stop(worker: Worker) -> None:
    worker.stop()
