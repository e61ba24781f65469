"""What the server wrote, recorded into the conversation's envelope off the write path.

The write path only writes: for each read it keeps the time it went out (``Recording.times``, 8 bytes a
read); the reads themselves are the plan's, already held. Once the answer is over (written whole, cut,
closed by the application, stalled), ``record`` feeds the reads written to the recorder's exchange, each
at its own time, as the proxy feeds what it forwards, so the envelope and the verdicts are those of a
recording made during the write. It goes a slice at a time, giving the event loop back between slices
(the other conversations' writes go on), and waits while the live diagnosis' queue is more than half
full (``record.live.Queued.room``), so a long answer never outruns its diagnosis.
An answer that went out whole is recorded from its plan's lines when an earlier answer kept them
(``serve.lines``: the same envelope, its times filled in, not a record dumped per event).

A follow-up may come before its turn is recorded. ``Pending`` is the listener the conversations are
given: it tells the grouping (``record.conversations``: ``settled``) to wait for the recording of the
turn the follow-up continues, as it waits for the live thread.
"""

from __future__ import annotations

import asyncio
import time
from array import array
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from stream_doctor.capture.base import Pos
from stream_doctor.record.conversations import Listener, ListenerFactory, progress_of, records_to, settle
from stream_doctor.record.exchange import RecordedExchange
from stream_doctor.record.writer import Slice
from stream_doctor.serve.lines import Lines, PlanLines

#: Reads recorded between two returns to the event loop.
SLICE = 256


class Recording:
    """One answer's reads (``reads``, the plan's) and when each went out (``times``, ``time.monotonic()``);
    an answer that went out whole is recorded from its plan's ``lines`` (``serve.lines``), or keeps them."""

    def __init__(self, exchange: RecordedExchange, reads: Sequence[tuple[float, bytes]], lines: PlanLines) -> None:
        self.exchange = exchange
        self.reads = reads
        self.times = array("d")
        self.recorded = 0
        #: when every read had gone out and the body's end was due (then a failure to end it cuts nothing)
        self.whole: float | None = None
        self.plan = lines
        self.lines: Lines | None = None  # the plan's lines this answer is recorded from
        self.event = 0  # the next of their events
        self.making: Lines | None = None  # the plan's lines this answer's recording keeps
        self.started = False

    def _start(self) -> None:
        """Whether this answer is recorded from its plan's lines, or keeps them: only one that went out whole
        (decided once: a stop that cancels ``record`` goes on with ``record_now``)."""
        plan = self.plan
        if self.started or len(self.times) != len(self.reads):
            return
        self.started = True
        if plan.lines is not None:
            self.lines = plan.lines
        elif plan.whole and not plan.making and not plan.refused:  # (a plan answered once, as most, keeps none)
            plan.making, self.making = True, Lines()
        plan.whole += 1

    def _feed(self, upto: int, pending: Pending | None) -> None:
        writer = self.exchange.writer
        first = self.recorded
        # the lines go to the file first (the writer's ``held`` ends first), then their records to the listener
        with held(pending), writer.held():
            times = [round(t - writer.start, 6) for t in self.times[first:upto]]
            if self.lines is not None:
                self.event, written = self.lines.write(writer, first, self.event, times)
                self.exchange.written += written
            elif self.making is not None:
                with self.making.taking(writer, first) as keep:
                    kept = keep(self.exchange.chunks([data for _, data in self.reads[first:upto]], times))
                if not kept:
                    self._refused()
            else:
                self.exchange.chunks([data for _, data in self.reads[first:upto]], times)
        self.recorded = upto

    def _refused(self) -> None:
        self.making, self.plan.making, self.plan.refused = None, False, True

    async def record(self, cause: str | None, ended: float, pending: Pending | None) -> None:
        """The reads written, then the end (``cause`` as ``RecordedExchange.end``'s, at ``ended``, unless the
        answer was ``whole``)."""
        self._start()
        written = len(self.times)
        while self.recorded < written:
            if pending is not None:
                await pending.room()
            self._feed(min(written, self.recorded + SLICE), pending)
            await asyncio.sleep(0)
        self._end(cause, ended)

    def record_now(self, cause: str | None, ended: float) -> None:
        """``record`` at once, for an answer the server's stop cancels (nothing may be awaited)."""
        self._start()
        while self.recorded < len(self.times):  # (a slice at a time still: each is read as one piece)
            self._feed(min(len(self.times), self.recorded + SLICE), None)
        self._end(cause, ended)

    def _end(self, cause: str | None, ended: float) -> None:
        if self.whole is not None:
            cause, ended = None, self.whole
        if self.lines is not None:
            self.lines.settle(self.exchange)
        elif self.making is not None:
            if self.making.ended(self.exchange):
                self.plan.lines, self.plan.making = self.making, False
            else:
                self._refused()
        self.exchange.end(cause, round(ended - self.exchange.writer.start, 6))


class Recordings:
    """A server's recordings: each conversation's ``Pending`` (by envelope path: what the grouping waits on)
    and the answers written and being recorded (``active``: what the stop waits on)."""

    def __init__(self, listen: ListenerFactory | None) -> None:
        self.listen = listen
        self.pending: dict[str, Pending] = {}
        self.active: set[Recording] = set()

    def listener(self, path: str, provider: str | None) -> Listener:
        """The ``ListenerFactory`` the conversations are given: ``listen``'s listener, behind a ``Pending``."""
        assert self.listen is not None
        pending = self.pending[path] = Pending(self.listen(path, provider))
        return pending

    async def record(self, recording: Recording, path: str, cause: str | None, ended: float) -> None:
        self.active.add(recording)
        try:
            await recording.record(cause, ended, self.pending.get(path))
        finally:
            self.active.discard(recording)

    async def finished(self, timeout: float) -> None:
        """Until every answer written is recorded (at most ``timeout`` seconds: then the server's stop records
        the rest at once, ``Recording.record_now``), so that the stop finds no handler busy recording."""
        deadline = time.monotonic() + timeout
        while self.active and time.monotonic() < deadline:
            await asyncio.sleep(0.01)


class Pending:
    """A conversation's listener (``inner``, the live diagnosis) and whether its latest turn is recorded."""

    def __init__(self, inner: Listener) -> None:
        self.inner = inner
        self.recorded = asyncio.Event()
        self.recorded.set()

    def record(self, record: dict[str, Any], line: bytes, pos: Pos) -> None:
        self.inner.record(record, line, pos)

    def records(self, batch: Slice) -> None:
        records_to(self.inner, batch)

    def exchange_ended(self) -> None:
        self.inner.exchange_ended()

    def assistant_turn(self) -> tuple[frozenset[str], frozenset[str]]:
        return self.inner.assistant_turn()

    def close(self) -> None:
        self.inner.close()

    async def settled(self) -> None:
        """Until the turn being recorded is, and the live diagnosis has read it."""
        await self.recorded.wait()
        await settle(self.inner)

    def progress(self) -> int:
        return progress_of(self.inner)

    async def room(self) -> None:
        room = getattr(self.inner, "room", None)
        if room is not None:
            await room()


def held(pending: Pending | None) -> AbstractContextManager[None]:
    """The listener's optional ``held`` (``record.live.Queued.held``: the records of a slice handed as one)."""
    held = getattr(pending.inner, "held", None) if pending is not None else None
    return held() if held is not None else nullcontext()
