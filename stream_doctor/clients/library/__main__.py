"""One client library run over every turn of one capture file after another, in a process of its own
(``--client``'s run mode, started, fed and bounded by ``clients/runs.py`` and ``clients/pool.py``):
``python -m stream_doctor.clients.library``.

It reads one JSON request per line on standard input, one per capture file (``profile``: the same
each time, ``path``, ``container``, ``provider``, ``max_memory``, ``seconds``, ``node_modules``: a
TypeScript profile's packages, run under Node by ``library/node.py``; ``only``: the one turn to
drive, by its number from 0, else every turn), and writes one JSON answer line for each on standard
output: ``{"missing": message}`` when the library does not import, ``{"failed": message}`` when it
cannot be driven at the version installed, else the installed version and, per turn, what the
library handed the tool and what it raised (``Outcome``), each position as ``[number, line, offset]``
in the capture file, or ``{"failed": message}`` for a turn it could not be driven on; ``"spent":
true`` when it ran out of memory, after which it ends. Anything the library prints goes to standard
error, so the answers are the only thing on standard output. It ends when standard input does.

The library is imported on the first request (that capture's time pays it) and kept; nothing else
is: each capture's run builds its own client, transport and event loop (docs/replay.md, "Run mode").

A turn whose response body is SSE bytes (a bare SSE file, a HAR entry's or a cassette's body) is fed
those bytes as the server sent them; any other turn (JSON Lines of parsed chunks, an envelope) is fed
its frames written back as SSE events, and the answer says so (``written_back``).
"""

from __future__ import annotations

import os
import resource
import sys
from typing import Any, BinaryIO

import orjson

from stream_doctor.capture.base import Body, Capture, Frame, Pos
from stream_doctor.clients.library import LibraryMissing
from stream_doctor.clients.runs import NODE_HEAP_MIB, RUN_SECONDS
from stream_doctor.conversation.build import Section
from stream_doctor.values.events import MISSING


def main() -> int:
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    requests = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what the library prints is no part of the answer
    with open(os.devnull, "rb") as nothing:
        os.dup2(nothing.fileno(), sys.stdin.fileno())  # nor is a library's read of standard input a request
    library = Library()
    try:
        for line in requests:
            if not line.strip():
                continue
            result = library.capture(orjson.loads(line))
            _write(answers, result)
            if result.get("spent"):
                break  # what this capture did may have hurt the library: the next one starts a fresh process
    finally:
        library.close()
    return 0


def _write(answer: BinaryIO, result: dict[str, Any]) -> None:
    answer.write(orjson.dumps(result, default=repr, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE))
    answer.flush()


class Library:
    """The profile's driver, loaded on the first capture (that capture pays the import) and kept for the
    next ones; each capture's run starts clean (docs/replay.md, "Run mode": what a driver could carry)."""

    def __init__(self) -> None:
        self.loaded: tuple[Any, str | None, tuple[str, str]] | dict[str, Any] | None = None
        self.limited = False

    def capture(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer on one capture file; ``spent``: a MemoryError was raised, the process should end."""
        if not self.limited:  # Node's heap is bounded on its own (library/node.py)
            limit = int(request["max_memory"])
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            self.limited = True
        try:
            result = self._run(request)
        except Exception as error:  # noqa: BLE001 - a library that cannot be driven here is an answer, not a crash
            result = {"failed": f"{type(error).__name__}: {str(error)[:200]}"}
            if not isinstance(self.loaded, tuple):
                self.loaded = result  # its import broke: it stays broken, said each time (spent below ends it)
        if _memory_error(result):
            result["spent"] = True
        return result

    def close(self) -> None:
        close = getattr(self.loaded[0], "close", None) if isinstance(self.loaded, tuple) else None
        if close is not None:
            close()

    def _run(self, request: dict[str, Any]) -> dict[str, Any]:
        from stream_doctor.capture import load
        from stream_doctor.conversation.build import split

        if self.loaded is None:
            try:
                self.loaded = _library(request["profile"], request)
            except LibraryMissing as missing:
                self.loaded = {"missing": str(missing), "package": missing.package}
        if isinstance(self.loaded, dict):
            return dict(self.loaded)
        run, installed, hands = self.loaded
        begin = getattr(run, "begin", None)
        if begin is not None:
            begin(float(request.get("seconds", RUN_SECONDS)))  # a Node run's time counts from this capture
        container, provider = request.get("container"), request.get("provider")
        capture = load(request["path"], container, bodies=True)
        bodies = {body.interaction: body for body in capture.bodies or () if body.container == "sse"}
        turns: list[dict[str, Any]] = []
        only = request.get("only")
        for number, section in enumerate(split(capture)):
            if only is not None and number != only:
                turns.append({"failed": "not asked for"})  # the live proxy asks for the turn just written
                continue
            try:
                turns.append(_turn(run, capture, section, bodies.get(section.interaction), provider))
            except Exception as error:  # noqa: BLE001 - this turn cannot be driven: the model answers for it
                turns.append({"failed": f"{type(error).__name__}: {str(error)[:200]}"})
        return {"installed": installed, "hands_at": hands[0], "hands_after": hands[1], "turns": turns}


def _memory_error(result: dict[str, Any]) -> bool:
    """Whether the library ran out of memory on this capture (its import, or a turn)."""
    said = [result.get("failed", ""), *(turn.get("failed", "") for turn in result.get("turns", ()))]
    return any(str(failed).startswith("MemoryError") for failed in said)


def _library(profile: str, request: dict[str, Any]) -> tuple[Any, str | None, tuple[str, str]]:
    """The profile's driver, the library's version installed, and where it hands a call (``HANDS_AT``):
    a Python library imported here, a TypeScript one run under Node (``library/node.py``)."""
    from importlib.metadata import PackageNotFoundError, version

    from stream_doctor.clients import PROFILES
    from stream_doctor.clients.library import load as load_library
    from stream_doctor.clients.library.node import PACKAGES, NodeRun

    if profile in PACKAGES:
        bounds = (float(request.get("seconds", RUN_SECONDS)), int(request.get("node_heap", NODE_HEAP_MIB)))
        node = NodeRun(profile, request.get("node_modules"), *bounds)
        return node, node.installed, node.hands_at
    run = load_library(profile)
    try:
        installed: str | None = version(PROFILES[profile].library or "")
    except PackageNotFoundError:
        installed = None
    return run, installed, sys.modules[run.__module__].HANDS_AT


def _turn(run: Any, capture: Capture, section: Section, body: Body | None, provider: str | None) -> dict[str, Any]:
    """What the library did on one turn: fed the turn's response bytes, else its frames written back."""
    places = {frame.pos.number: frame.pos for frame in section.frames}
    header = {"provider": provider} if provider else None
    if body is not None:
        fed, frames, original = _fed(body)
        fed.header = header
        outcome = run(fed, frames, original)
    else:
        fed = Capture(capture.path, capture.container, capture.size, section.frames, header=header)
        fed.ended_cleanly = section.ended_cleanly
        outcome = run(fed, section.frames)
    return {
        "written_back": body is None,
        "seen": [
            [_place(places, s.at), s.call_id, s.name, None if s.value is MISSING else s.value, s.value is MISSING]
            for s in outcome.seen
        ],
        "error": outcome.error,
        "error_at": _place(places, outcome.error_at),
        "message": outcome.message,
    }


def _fed(body: Body) -> tuple[Capture, list[Frame], Any]:
    """What a driver reads of a response body (``body_capture``), its frames, and the body's bytes."""
    from stream_doctor.clients.library import Original, body_capture

    fed = body_capture(body)
    return fed, fed.frames, Original(body.data)


def _place(places: dict[int, Pos], number: int | None) -> list[int] | None:
    pos = places.get(number) if number is not None else None
    return list(pos) if pos is not None else None


if __name__ == "__main__":
    sys.exit(main())
