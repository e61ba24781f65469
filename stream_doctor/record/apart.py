"""The live diagnosis in a process of its own, so that a 2-core machine writes and diagnoses at once.

``serve`` writes an answer and then records it; the diagnosis of what it recorded (``live.LiveConversation``:
each record made a frame, translated, accumulated, judged) costs several times the write. On the live thread
it ran in the interpreter that writes the next answer, and took its turn at the GIL: back to back, every answer
shared one core with the last one's diagnosis. ``Apart`` is a ``live.Live`` whose thread runs nothing itself:
it hands each item of its queue (the queue, its bound, ``room`` and what happens when it is full stay
``Live``'s: said, not silent) to a child process that runs the same ``LiveConversation`` on it, and takes back
the findings, the lines to say and what ``assistant_turn`` tells the grouping.

What crosses is small: a slice's lines joined in one bytes object and their positions in one array; the child
reads each line as the envelope reader does (``orjson``; a line nested deeper than it reads, with ``json``),
which is the record the writer dumped. The child runs no library (``--client-mode run``): serve judges with the
models.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from array import array
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable

import orjson

from stream_doctor.capture.base import Pos
from stream_doctor.record.live import DRAIN, QUEUE_BYTES, Live, LiveConversation, Queued
from stream_doctor.values.options import Options

#: Seconds the child gets to end once the connection closes, before it is killed.
_END = 5.0
#: The child's recursion bound: ``json`` reads a line nested deeper than ``orjson`` does (1,024 levels).
_DEEP = 20_000

#: What the child answers each item with: the conversation's new findings, the lines said (``emit``) and logged
#: (``log``), ``assistant_turn`` when it was asked for, whether its diagnosis broke, and once it is closed
#: what the diagnosis keeps of it (``Live.kept``).
Answer = tuple[list[Any], list[str], list[str], "tuple[frozenset[str], frozenset[str]] | None", bool, Any]


class Apart(Live):
    """A ``Live`` whose conversations are diagnosed by a ``diagnosis`` (a ``Live`` class, its ``found`` kept:
    ``serve.judge.Watching``) in a child process, fed by this one's live thread."""

    def __init__(
        self,
        diagnosis: type[Live],
        options: Options,
        emit: Callable[[str], None] | None = None,
        log: Callable[[str], None] | None = None,
        queue_bytes: int = QUEUE_BYTES,
    ) -> None:
        super().__init__(options, emit, log, queue_bytes)
        self.diagnosis = diagnosis
        self._keys: dict[Queued, int] = {}  # each conversation's number in the child, once opened there
        self._child: subprocess.Popen[bytes] | None = None
        self._said: OSError | None = None
        self._connection: _Pair | None = None
        #: ``Live.kept`` of each conversation the child closed whole (by envelope path)
        self.held: dict[str, Any] = {}

    def queued(self, path: str, provider: str | None) -> Queued:
        """``Live.queued``; the first starts the child, so that it is ready (its imports take a second of CPU, on
        the other core) before the first answer is recorded."""
        if self._child is None:
            try:
                self._start()
            except OSError as error:  # said when the first item is handed to it
                self._said = error
        return super().queued(path, provider)

    def _run(self, handle: Queued, kind: str, item: Any) -> None:
        """On the live thread: ``item`` diagnosed by the child; what it found taken back (``Queued.run``'s part)."""
        try:
            if not handle.broken:
                self._apply(handle, self._ask(handle, kind, item))
        except Exception as error:  # noqa: BLE001 - the child is gone (or never came): what it finds is not known
            handle.broken = True
            self.broken += 1
            self._say(
                f"stream-doctor record: no more live findings for {handle.conversation.path} (the diagnosis process "
                f"ended: {type(error).__name__}: {error}); it is still recorded, replay it afterwards"
            )
        finally:
            handle.done += len(item) if kind == "record" else 1

    def _ask(self, handle: Queued, kind: str, item: Any) -> Answer:
        if self._connection is None:
            raise self._said or OSError("the diagnosis process has ended")
        key = self._keys.get(handle)
        opening = None
        if key is None:
            key = self._keys[handle] = len(self._keys)
            opening = (handle.conversation.path, handle.conversation.adapter and handle.conversation.adapter.name)
        payload: Any = None
        want = False
        if kind == "record":
            positions = array("q", [n for _, _, pos in item for n in pos])
            payload = (b"\n".join(line for _, line, _ in item), positions)
            want = not handle._more()  # (else the next record read asks, or a later one)
        elif kind == "close":
            payload = handle.skipped
        assert self._connection is not None
        self._connection.send((key, opening, kind, payload, want))
        answer: Answer = self._connection.recv()
        return answer

    def _apply(self, handle: Queued, answer: Answer) -> None:
        findings, said, logged, turn, broken, kept = answer
        if kept is not None:
            self.held[handle.conversation.path] = kept
        with self.emitting:
            handle.conversation.findings += findings
            for finding in findings:
                if self.worst is None or finding.severity > self.worst:
                    self.worst = finding.severity
            if self.emit is not None:
                for line in said:  # (made by ``reporters.live_lines`` in the child, as this thread would)
                    self.emit(line)
        for line in logged:
            self._told(line)
        if turn is not None:
            handle.turn = turn
        if broken:
            handle.broken = True
            self.broken += 1

    def _told(self, line: str) -> None:
        """A line of the child's log, already neutralised there (``Live._say``)."""
        if self.log is not None:
            self.log(line)
        else:
            print(line, file=sys.stderr, flush=True)

    def _start(self) -> None:
        # a new interpreter, not a fork (this process runs an event loop and threads, which a fork would copy
        # mid-step), and not multiprocessing's spawn (it imports the caller's __main__ again: a test module, a
        # user's script)
        down, up = os.pipe(), os.pipe()  # (the child reads, we write), (it writes, we read)
        package = str(Path(__file__).resolve().parents[2])
        paths = [package, *filter(None, [os.environ.get("PYTHONPATH")])]
        code = f"from stream_doctor.record.apart import child; child({down[0]}, {up[1]})"
        self._child = subprocess.Popen(
            [sys.executable, "-c", code],
            pass_fds=(down[0], up[1]),
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        )
        os.close(down[0])
        os.close(up[1])
        self._connection = _Pair(Connection(up[0], writable=False), Connection(down[1], readable=False))
        self._connection.send((self.diagnosis, self.options))

    def drain(self, timeout: float = DRAIN, runs_timeout: float | None = None) -> bool:
        """``Live.drain``, then the child ends (it has answered every item the thread handed it)."""
        caught_up = super().drain(timeout, runs_timeout)
        self.end()
        return caught_up

    def end(self) -> None:
        connection, child = self._connection, self._child
        self._connection = self._child = None
        if connection is not None:
            connection.close()  # the child reads EOF and returns
        if child is not None:
            try:
                child.wait(_END)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


class _Pair:
    """The two pipes to the child, as one connection."""

    def __init__(self, reading: Connection, writing: Connection) -> None:
        self.reading = reading
        self.writing = writing

    def send(self, value: Any) -> None:
        self.writing.send(value)

    def recv(self) -> Any:
        return self.reading.recv()

    def close(self) -> None:
        self.writing.close()
        self.reading.close()


def child(reading: int, writing: int) -> None:
    """The child's entry: its connection to the parent from the pipes' ends it was given."""
    connection = _Pair(Connection(reading, writable=False), Connection(writing, readable=False))
    try:
        diagnosis, options = connection.recv()
    except (EOFError, OSError):
        return
    _diagnose(connection, diagnosis, options)


def _diagnose(connection: _Pair, diagnosis: type[Live], options: Options) -> None:
    """Each item the parent's live thread hands it, run on that conversation, answered in order."""
    sys.setrecursionlimit(_DEEP)
    said: list[str] = []
    logged: list[str] = []
    live = diagnosis(options, said.append, logged.append)
    conversations: dict[int, LiveConversation] = {}
    reported: dict[int, int] = {}  # findings already sent back, per conversation
    while True:
        try:
            key, opening, kind, payload, want = connection.recv()
        except (EOFError, OSError):
            return
        if opening is not None:
            conversations[key] = live.listener(*opening)
            reported[key] = 0
        conversation = conversations[key]
        turn, broken, kept = None, False, None
        try:
            turn = _run(conversation, kind, payload, want)
            if kind == "close" and not payload:
                kept = live.kept(conversation)
        except Exception as error:  # noqa: BLE001 - a bug in the diagnosis must never cost a capture
            broken = True
            live._say(
                f"stream-doctor record: no more live findings for {conversation.path} (internal error: "
                f"{type(error).__name__}: {error}); it is still recorded, replay it afterwards"
            )
        found = conversation.findings[reported[key] :]
        reported[key] = len(conversation.findings)
        connection.send((found, said[:], logged[:], turn, broken, kept))
        said.clear()
        logged.clear()


def _run(
    conversation: LiveConversation, kind: str, payload: Any, want: bool
) -> tuple[frozenset[str], frozenset[str]] | None:
    """One item on ``conversation``, as ``Queued.run`` does it on the live thread."""
    if kind == "record":
        lines, positions = payload
        for at, line in enumerate(lines.split(b"\n")):
            conversation.record(_loaded(line), line, Pos(*positions[3 * at : 3 * at + 3]))
        return conversation.assistant_turn() if want else None
    if kind == "exchange_ended":
        conversation.exchange_ended()
    elif payload:  # records it never got (the queue was full): no judgement of a turn it did not see whole
        conversation.abandon(payload)
    else:
        conversation.close()
    return None


def _loaded(line: bytes) -> Any:
    """The record the writer dumped as ``line``."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:  # nested past orjson's 1,024 levels (``util.jsontext`` wrote it)
        return json.loads(line)
