"""Which conversation an exchange through the recording proxy belongs to, and the one envelope each
conversation is written to.

A request continues a conversation when it carries that conversation's previous assistant turn:
a tool call of the previous response by id (sent back, or answered by a result), the previous
response itself (Responses ``previous_response_id``), or the previous request's whole history
followed by an assistant message (the previous answer, sent back as text): ``record.echo.continues``,
the one rule, which ``serve`` also reads a capture's conversations by. Anything else starts
a new conversation, with a file of its own. The header says so (``grouping``) and counts the
exchanges, a fixed-width number rewritten in place, so the file is only ever appended to and
stays readable at every moment.

What a response's assistant turn held (its call ids, its message id) comes from a ``Listener``
the proxy is given (``stream_doctor.record.live``: the same translation the live findings use); without
one, requests are grouped by their history alone. The listener may read the records on another
thread, and ``serve`` records a turn after writing it: a request that sends calls or a response id
back and continues nothing known yet waits for the listeners still behind to catch up (``settled``),
and one that continues a conversation still recording its previous exchange waits for that exchange's
end. Neither wait has a wall-time limit while it progresses (records written, records read by the
listener): it gives up only after ``SETTLE`` seconds without progress (``_patiently``), so the grouping
never depends on how busy that thread is or how long a turn takes to record. A request that sends
nothing back never waits.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any, Awaitable, Callable, Iterator, Protocol

from stream_doctor.capture.base import Pos
from stream_doctor.record.echo import NOTHING, Echo, Reading, continues, history_text, reading_for
from stream_doctor.record.writer import EnvelopeWriter, Slice

GROUPING = "assistant-turn echo"

#: Seconds without progress after which a request that continues a conversation stops waiting for that
#: conversation's previous exchange to be recorded and read (the client has its last event; the upstream's
#: end, or ``serve``'s recording after the write, may still be on its way): see ``_patiently``.
SETTLE = 5.0
#: Idle conversations whose files stay open; older ones are closed and reopened if continued.
OPEN_FILES = 64
#: Conversations remembered for grouping; the oldest idle one is forgotten past this (its file is done).
REMEMBERED = 4096


class Listener(Protocol):
    """What watches one conversation's envelope as it is written (``stream_doctor.record.live``)."""

    def record(self, record: dict[str, Any], line: bytes, pos: Pos) -> None: ...

    def exchange_ended(self) -> None: ...

    def assistant_turn(self) -> tuple[frozenset[str], frozenset[str]]:
        """The call ids and message ids of the latest response, so far."""
        ...

    def close(self) -> None: ...

    # optional: ``async def settled(self) -> None``, until ``assistant_turn`` reflects every record written
    # optional: ``def progress(self) -> int``, a count that grows as the listener reads what it is given
    # optional: ``def held(self) -> ContextManager[None]``, the records handed meanwhile read as one batch
    # optional: ``def records(self, batch: Slice) -> None``, the records the writer wrote at once, made as read
    # (read through ``settle``, ``progress_of``, ``serve.recording.held`` and ``records_to``: the one place each
    # is answered for a listener without it)


async def settle(listener: object) -> None:
    """Until ``listener`` has read every record written, if it says (its optional ``settled``)."""
    settled = getattr(listener, "settled", None)
    if settled is not None:
        await settled()


def progress_of(listener: object) -> int:
    """``listener``'s optional ``progress`` count (0 for a listener that keeps none)."""
    progress = getattr(listener, "progress", None)
    return int(progress()) if progress is not None else 0


def records_to(listener: Listener, batch: Slice) -> None:
    """``batch`` handed to ``listener``: as one, when it reads a slice (its optional ``records``), else a record
    at a time."""
    records = getattr(listener, "records", None)
    if records is not None:
        records(batch)
        return
    for record, line, pos in batch:
        listener.record(record, line, pos)


#: Makes the listener of a new conversation: (its envelope's path, its provider).
ListenerFactory = Callable[[str, "str | None"], Listener]


@dataclass(eq=False)
class Conversation:
    number: int
    path: str
    provider: str | None
    start: float  # time.monotonic() when its first exchange began
    writer: EnvelopeWriter
    listener: _Guarded | None
    exchanges: int = 0
    busy: int = 0  # exchanges being recorded
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    history: tuple[bytes, ...] = ()  # of its latest request
    used: float = 0.0  # when it last began an exchange
    #: its latest request as the grouping read it (None once its file is closed: kept for the open ones only)
    reading: Reading | None = None

    def progress(self) -> int:
        """Grows while an exchange of this conversation is being recorded or read by its listener."""
        return self.writer.lines + progress_of(self.listener)

    def continued_by(self, echo: Echo) -> bool:
        calls, messages = self.listener.assistant_turn() if self.listener is not None else (frozenset(), frozenset())
        return continues(echo, self.history, calls, messages)


class Conversations:
    """The proxy's conversations: which one each exchange joins, and their files."""

    def __init__(
        self,
        out: str,
        source: str,
        listen: ListenerFactory | None = None,
        counter: Iterator[int] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.out = out
        self.log = log
        self.counter = counter if counter is not None else itertools.count(1)
        self.source = source
        self.listen = listen
        self.numbers = 0
        self.live: OrderedDict[int, Conversation] = OrderedDict()  # least recently used first
        self.closed = False

    async def join(self, provider: str | None, body: Any, path: str, start: float) -> Conversation:
        """The conversation the exchange whose request ``body`` this is belongs to (a new one when it
        continues none); its file is open and its exchange counted. Grouping reads the body as the
        client sent it: should that fail, the exchange is still recorded, in a conversation of its own."""
        reading = Reading()
        try:
            text = history_text(body)
            reading = self._reading(provider, text)
            echo = reading.read(provider, body, text)
        except Exception as error:  # noqa: BLE001 - records first: a failure of grouping never costs the exchange
            echo = NOTHING
            if self.log is not None:
                self.log(
                    f"stream-doctor record: could not read what {path} sends back (internal error: "
                    f"{type(error).__name__}: {error}); it is recorded as a conversation of its own"
                )
        found = self._continued(provider, echo)
        if found is None and (echo.call_ids or echo.previous_response_id is not None):
            # what it sends back may be in records a listener has not read yet
            behind = [c for c in self.live.values() if c.provider == provider and c.listener is not None]
            await _patiently(
                asyncio.gather(*(c.listener.settled() for c in behind if c.listener is not None)),
                lambda: sum(c.progress() for c in behind),
            )  # else grouped by what is known
            found = self._continued(provider, echo)
        if found is not None and found.busy:
            if not await _patiently(found.idle.wait(), found.progress):
                found = None
            elif found.busy or found.number not in self.live or not found.continued_by(echo):
                # another exchange took it meanwhile (two agents sending back the same call id): the
                # turn this one sends back may be another conversation's, else it stands alone
                again = self._continued(provider, echo)
                found = again if again is not None and not again.busy else None
        joined = self._taken(found if found is not None else self._new(provider, path, start), echo.history)
        joined.reading = reading
        return joined

    def _reading(self, provider: str | None, text: bytes | None) -> Reading:
        """The reading of the conversation whose latest request this one's history repeats (taken from it: the
        request most likely joins it, and the reading moves on to this request), else a new one."""
        return reading_for(text, (c for c in reversed(self.live.values()) if c.provider == provider))  # recent first

    async def rejoin(self, number: int) -> Conversation | None:
        """Conversation ``number`` again, for a request that repeats its latest one (a client's retry, which
        ``serve`` tells apart); None when it is forgotten, or its exchange being recorded stalls (``_patiently``)."""
        found = self.live.get(number)
        if found is not None and found.busy and not await _patiently(found.idle.wait(), found.progress):
            return None
        if found is None or found.busy or found.number not in self.live:
            return None
        return self._taken(found, found.history)

    def _taken(self, found: Conversation, history: tuple[bytes, ...]) -> Conversation:
        """``found`` joined by one more exchange, whose request sends ``history``."""
        if found.writer.closed:
            self._reopen(found)
        found.busy += 1
        found.idle.clear()
        found.exchanges += 1
        found.history = history
        found.used = time.monotonic()
        self.live.move_to_end(found.number)
        if found.exchanges > 1:
            found.writer.count(found.exchanges)
        return found

    def _continued(self, provider: str | None, echo: Echo) -> Conversation | None:
        for conversation in reversed(self.live.values()):  # the most recent first
            if conversation.provider == provider and conversation.continued_by(echo):
                return conversation
        return None

    def release(self, conversation: Conversation) -> None:
        """An exchange of ``conversation`` is recorded to its end."""
        if conversation.listener is not None:
            conversation.listener.exchange_ended()
        conversation.busy -= 1
        if conversation.busy == 0:
            conversation.idle.set()
        self._trim()

    def close(self) -> None:
        """The proxy stops: every file closed, every listener told (its summary)."""
        if self.closed:
            return
        self.closed = True
        for conversation in self.live.values():
            conversation.writer.close()
            if conversation.listener is not None:
                conversation.listener.close()

    def _new(self, provider: str | None, path: str, start: float) -> Conversation:
        file, name = _open(self.out, path, self.counter)
        self.numbers += 1
        listener = _Guarded(self.listen(name, provider), name, self.log) if self.listen is not None else None
        writer = EnvelopeWriter(
            file,
            start,
            listener.record if listener is not None else None,
            observe_slice=listener.records if listener is not None else None,
        )
        started = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        writer.header(provider, self.source, started=started, grouping=GROUPING, exchanges=1)
        conversation = Conversation(self.numbers, name, provider, start, writer, listener)
        self.live[conversation.number] = conversation
        return conversation

    def _reopen(self, conversation: Conversation) -> None:
        old = conversation.writer
        file = open(conversation.path, "r+b")  # noqa: SIM115 - closed by the writer
        file.seek(0, os.SEEK_END)
        writer = EnvelopeWriter(file, old.start, old.observe, (old.frames, old.lines, old.size), old.observe_slice)
        writer.count_at = old.count_at
        conversation.writer = writer

    def _trim(self) -> None:
        idle = [c for c in self.live.values() if not c.busy]
        for conversation in idle[: max(0, len(idle) - OPEN_FILES)]:
            conversation.writer.close()
            conversation.reading = None  # what it holds of its latest request: a continuation reads it whole
        for conversation in idle[: max(0, len(self.live) - REMEMBERED)]:
            del self.live[conversation.number]
            if conversation.listener is not None:
                conversation.listener.close()


async def _patiently(wait: Awaitable[Any], progress: Callable[[], int]) -> bool:
    """Whether ``wait`` ended; False once ``SETTLE`` seconds passed with ``progress`` the same (then ``wait`` is
    cancelled). A recording that goes on is waited for however long it takes: a wall-time limit would put a
    follow-up of a long answer in a conversation of its own; one that stops is given up on."""
    task = asyncio.ensure_future(wait)
    try:
        seen = progress()
        while not (await asyncio.wait((task,), timeout=SETTLE))[0]:
            now = progress()
            if now == seen:
                return False
            seen = now
        task.result()
        return True
    finally:
        task.cancel()


def _open(out: str, request_path: str, counter: Iterator[int]) -> tuple[IO[bytes], str]:
    """A new envelope file: ``0001-20261123T143000Z-v1-messages.jsonl`` (never overwrites one)."""
    os.makedirs(out, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", request_path).strip("-")[:60] or "root"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    while True:
        path = os.path.join(out, f"{next(counter):04d}-{stamp}-{slug}.jsonl")
        try:
            return open(path, "xb"), path  # noqa: SIM115 - closed by the writer
        except FileExistsError:
            continue


class _Guarded:
    """A listener whose failure stops only itself: the recording goes on (a bug in the diagnosis
    must never cost a capture), and the log says once that this conversation's findings stopped."""

    def __init__(self, inner: Listener, path: str, log: Callable[[str], None] | None) -> None:
        self.inner: Listener | None = inner
        self.path = path
        self.log = log

    def _failed(self, error: Exception) -> None:
        self.inner = None
        if self.log is not None:
            self.log(
                f"stream-doctor record: no more live findings for {self.path} (internal error: "
                f"{type(error).__name__}: {error}); it is still recorded, replay it afterwards"
            )

    def record(self, record: dict[str, Any], line: bytes, pos: Pos) -> None:
        if self.inner is not None:
            try:
                self.inner.record(record, line, pos)
            except Exception as error:  # noqa: BLE001 - see the class
                self._failed(error)

    def records(self, batch: Slice) -> None:
        if self.inner is not None:
            try:
                records_to(self.inner, batch)
            except Exception as error:  # noqa: BLE001 - see the class
                self._failed(error)

    def exchange_ended(self) -> None:
        if self.inner is not None:
            try:
                self.inner.exchange_ended()
            except Exception as error:  # noqa: BLE001
                self._failed(error)

    def assistant_turn(self) -> tuple[frozenset[str], frozenset[str]]:
        if self.inner is not None:
            try:
                return self.inner.assistant_turn()
            except Exception as error:  # noqa: BLE001
                self._failed(error)
        return frozenset(), frozenset()

    async def settled(self) -> None:
        await settle(self.inner)

    def progress(self) -> int:
        return progress_of(self.inner)

    def close(self) -> None:
        if self.inner is not None:
            try:
                self.inner.close()
            except Exception as error:  # noqa: BLE001
                self._failed(error)
