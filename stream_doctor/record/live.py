"""Findings while the recording proxy records: the replay of each conversation, a record at a time.

The proxy hands every record it writes (``record.conversations.Listener``) to a ``LiveConversation``,
which does what ``engine`` does to the written file, in the same order and with the same pieces,
but as the records come: each frame is made as the envelope reader makes it (``envelope.to_frame``
at the position the reader gives), translated by the provider's translator and fed to the turn's
``Accumulator`` (the streaming seam: the pipeline's stitching state) and to the ``--client``
profiles (``stages.Kept``); without profiles, event frames go through as batches (``flush``), as replay's
do. No turn is ever read again:

- when a request passes, ``Pairing.request`` checks it against the turns before it (the calls it
  sends back, the results it carries) and the conversation rules judge those problems alone: the
  empty-input echo (SD608) is printed the moment the request that sends it back is recorded;
- when a response ends (its last event, or the cut that ends it), the turn's stream is complete:
  the stream rules judge it (a call complete or abandoned, an error event, a cut), and the
  conversation rules judge that turn's calls (SD7xx) and ``Pairing.streamed``'s problems.

The stream rules are pure functions of a finished stream, so a call's findings come when its
response ends, not at the event that completes it: running them at every event would re-read the
turn for each one. SD306 (a call pending long after its turn ended) needs the next request's time,
and is judged again when it comes. The findings are those ``replay`` gives on the written file
(``tests/record/test_live.py`` checks it for every fixture the proxy can serve).

None of it runs on the proxy's event loop: the proxy is handed ``Live.queued`` listeners, which only
put the record the writer has just built on one bounded queue per proxy (``serve``, recording an answer
already sent, puts a slice's records as one item: ``Queued.held``; those of a plan's kept lines are made by
the thread as it reads them: ``record.writer.Slice``); one thread takes the records off in order (so each
conversation's stay in order) and feeds the ``LiveConversation``.
Forwarding never waits for the diagnosis: when the queue holds ``QUEUE_BYTES`` (estimated: twice
the line plus a record's overhead) the conversation whose record does not fit stops being diagnosed,
the log says so once, its later records are counted (``Live.undiagnosed``) and its summary says to
replay its file. At stop, ``Live.drain`` waits (bounded) for the thread to catch up, so that
``--fail-on`` judges every finding; what it could not wait for is counted the same way.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import replace
from math import isnan
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.spill import ArgumentStore
from stream_doctor.accumulate.stream import AccumulatedStream, CaptureInfo
from stream_doctor.capture.base import Frame, Pos
from stream_doctor.capture.envelope import CUT_KINDS, to_frame
from stream_doctor.capture.limits import human
from stream_doctor.conversation.build import RequestReader
from stream_doctor.conversation.model import NO_FACTS, RequestInfo, Turn
from stream_doctor.conversation.pairing import Pairing
from stream_doctor.conversation.pairing_problems import PairingProblem
from stream_doctor.engine.stages import (
    Kept,
    diagnose,
    diagnose_clients,
    diagnose_conversation,
    profiles_named,
    selected_rules,
    unknown_fields_once,
)
from stream_doctor.providers import ADAPTERS
from stream_doctor.record.echo import carried
from stream_doctor.record.live_turn import LiveTurn, Window, clocked
from stream_doctor.record.verdicts import (
    VERDICTS_WAITING,
    LibraryVerdict,
    library_processes,
    models_of,
    runs_libraries,
)
from stream_doctor.record.writer import Slice
from stream_doctor.reporters import live_lines as lines
from stream_doctor.values.envelope_events import envelope_event
from stream_doctor.values.findings import Finding, Severity
from stream_doctor.values.options import Options

#: What the live thread is handed of each record the writer writes (``record.conversations.Listener.record``).
Record = tuple[dict[str, Any], bytes, Pos]

#: The rule that needs the time the next request came (``timing.Clock.after``).
_AFTER_TURN = "SD306"
#: Event frames translated together, at most (``LiveConversation.flush``).
_BATCH = 256

#: What the records waiting for the live thread may hold (an estimate: ``_cost``). ~100,000 small
#: events, or 4 whole default --max-event payloads; the thread reads ~10,000-30,000 records a second.
QUEUE_BYTES = 64 * 1024 * 1024
#: How long ``Live.drain`` waits at stop by default for the live thread to catch up.
DRAIN = 10.0
#: How long ``Live.await_verdicts`` waits at stop for the library runs of the last exchanges (a start-up
#: takes 1 to 5 s of CPU, docs/replay.md), after which the models' verdicts stand for them.
RUNS_DRAIN = 60.0
#: The longest the event loop waits on the live thread between two looks at what it waits for: the
#: thread wakes it as it takes and runs each item (``Live.until``), this only bounds a wake-up gone astray.
WAKE_BOUND = 0.05


def _cost(records: list[Record] | Slice) -> int:
    """The memory queued records hold, estimated: each line, the record's strings decoded from it, and the
    dict itself (summed by C calls: a slice's records are queued as one item; a ``Slice``'s are made as the
    live thread reads it, but it is counted alike)."""
    lines = records.lines if type(records) is Slice else map(itemgetter(1), records)
    return 2 * sum(map(len, lines)) + 512 * len(records)


class Live:
    """The findings of every conversation the proxy records, each printed (``emit``) as it is known;
    ``worst`` is the highest severity found, for ``--fail-on``."""

    def __init__(
        self,
        options: Options,
        emit: Callable[[str], None] | None = None,
        log: Callable[[str], None] | None = None,
        queue_bytes: int = QUEUE_BYTES,
    ) -> None:
        self.options = options
        self.emit = emit
        self.log = log  # the live thread's own problems (the proxy's log)
        self.profiles = profiles_named("--client", options)
        self.worst: Severity | None = None
        self.conversations: list[LiveConversation] = []
        self.undiagnosed = 0  # records the live thread never read: the queue was full, or the stop came first
        self.broken = 0  # conversations whose diagnosis failed (an internal error): each counts as an error
        self.queue_bytes = queue_bytes
        self._queue: deque[tuple[Queued, str, Any, int]] = deque()
        self._held = 0  # the queued records' ``_cost``
        self._lock = threading.Lock()
        self._waiting = threading.Condition(self._lock)  # the thread, for work
        self._caught_up = threading.Condition(self._lock)  # ``drain``, for an empty queue
        self._busy = False  # the thread is running an item
        self._wakers: list[Callable[[], None]] = []  # the event loop's waits on the thread (``until``)
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.emitting = threading.Lock()  # what is found, and each conversation's verdicts awaited
        self.verdicts: list[LibraryVerdict] = []
        self.runs_libraries = runs_libraries(options, self.profiles)
        self.processes = library_processes(self.runs_libraries)  # closed once the verdicts are in (the stop)
        self._required_said = False

    def listener(self, path: str, provider: str | None) -> LiveConversation:
        """A conversation diagnosed on the caller's thread, as its records are handed to it."""
        conversation = LiveConversation(self, path, provider)
        self.conversations.append(conversation)
        return conversation

    def queued(self, path: str, provider: str | None) -> Queued:
        """The ``record.conversations.ListenerFactory`` the proxy is given: the conversation is
        diagnosed on the live thread."""
        return Queued(self, self.listener(path, provider))

    def drain(self, timeout: float = DRAIN, runs_timeout: float | None = None) -> bool:
        """Wait until the live thread has read everything queued (at most ``timeout`` seconds); on
        time out, what is left is counted as not diagnosed and the thread stops. Then the libraries'
        verdicts still running (``await_verdicts``). True when the thread caught up."""
        caught_up = self._catch_up(timeout)
        self.await_verdicts(RUNS_DRAIN if runs_timeout is None else runs_timeout)
        return caught_up

    def _catch_up(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopped:
                    break
                self._caught_up.wait(left)
            if not self._queue and not self._busy:
                return True
            self._stopped = True
            records = sum(len(item) for _, kind, item, _ in self._queue if kind == "record")
            handles = {handle for handle, _, _, _ in self._queue}
            self._queue.clear()
            self._held = 0
            self._waiting.notify()
            wakers, self._wakers = self._wakers, []
        _wake(wakers)
        skipped = records + sum(h.skipped for h in handles)
        self.undiagnosed += skipped
        self._say(
            f"stream-doctor record: stopped waiting for the live findings after {timeout:g} s; "
            f"{skipped} records not diagnosed (replay the envelopes)"
        )
        return False

    def _put(self, handle: Queued, kind: str, item: Any, cost: int) -> bool:
        """Queue ``item`` for the live thread; False (and nothing queued) when a record would not fit."""
        with self._lock:
            if self._stopped or (cost and self._held + cost > self.queue_bytes):
                return False
            self._queue.append((handle, kind, item, cost))
            self._held += cost
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="stream-doctor live", daemon=True)
                self._thread.start()
            self._waiting.notify()
        return True

    def _work(self) -> None:
        while True:
            with self._lock:
                self._busy = False
                while not self._queue:
                    if self._stopped:
                        return
                    self._caught_up.notify_all()
                    self._waiting.wait()
                if self._stopped:
                    return
                handle, kind, item, cost = self._queue.popleft()
                self._held -= cost
                self._busy = True
                wakers, self._wakers = self._wakers, []
            _wake(wakers)  # room was made (``Queued.room``)
            handle.run(kind, item)
            with self._lock:
                wakers, self._wakers = self._wakers, []
            _wake(wakers)  # an item was read (``Queued.settled``)

    async def until(self, ready: Callable[[], bool]) -> None:
        """Until ``ready()``, read on the event loop each time the live thread takes or runs an item (or
        it stops), not polled: a poll every millisecond took the interpreter's lock from the thread it
        waits on a thousand times a second."""
        loop = asyncio.get_running_loop()
        while not ready() and not self._stopped:
            woken = loop.create_future()

            def wake(woken: asyncio.Future[None] = woken) -> None:
                try:
                    loop.call_soon_threadsafe(_resolve, woken)
                except RuntimeError:  # the loop closed meanwhile: nothing waits any more
                    pass

            with self._lock:
                self._wakers.append(wake)
            try:
                if not ready():  # (the thread may have run an item between the look and the registration)
                    await asyncio.wait((woken,), timeout=WAKE_BOUND)
            finally:
                with self._lock:
                    if wake in self._wakers:
                        self._wakers.remove(wake)

    def _say(self, line: str) -> None:
        line = lines.log_line(line)
        if self.log is not None:
            self.log(line)
        else:
            print(line, file=sys.stderr, flush=True)

    @property
    def failed(self) -> bool:
        """A finding reached ``--fail-on``, or a diagnosis failed: what it would have found is not known,
        so a failed check never passes a run (an error, whatever the threshold)."""
        return self.broken > 0 or (self.worst is not None and self.worst >= self.options.fail_on)

    def found(self, conversation: LiveConversation, findings: Iterable[Finding]) -> None:
        with self.emitting:  # the live thread, and a library verdict's own thread
            for finding in findings:
                conversation.findings.append(finding)
                if self.worst is None or finding.severity > self.worst:
                    self.worst = finding.severity
                if self.emit is not None:
                    self.emit(lines.finding(finding))

    def closed(self, conversation: LiveConversation) -> None:
        """A conversation closed after it was read whole (on the live thread): nothing more here;
        ``serve.judge.Watching`` keeps what its judge would otherwise replay the envelope for."""

    def required(self, message: str) -> None:
        """``--client-mode run`` named a library that cannot run: said once; the models answer."""
        with self.emitting:
            said, self._required_said = self._required_said, True
        if not said:
            self._say(f"stream-doctor record: {message}; the live findings give the models' verdicts")

    def await_verdicts(self, timeout: float) -> None:
        """At stop: wait (at most ``timeout`` seconds) for the libraries' verdicts still running; the
        model's verdict stands for any that does not come, so a run never costs a finding."""
        deadline = time.monotonic() + timeout
        for verdict in list(self.verdicts):
            verdict.thread.join(max(0.0, deadline - time.monotonic()))
        late = [verdict for verdict in self.verdicts if not verdict.done]
        for verdict in late:
            verdict.give_up()
        if self.processes is not None:
            self.processes.close()
        if late:
            self._say(
                f"stream-doctor record: {len(late)} library runs did not answer within {timeout:g} s of the stop; "
                "their turns have the models' verdicts (replay the envelopes with --client to run them)"
            )


class Queued:
    """What the proxy holds of a conversation diagnosed on the live thread (a
    ``record.conversations.Listener``): the proxy's calls put items on the queue and return; the live
    thread runs them (``run``) in order."""

    _NOTHING: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())

    def __init__(self, live: Live, conversation: LiveConversation) -> None:
        self.live = live
        self.conversation = conversation
        self.turn = self._NOTHING  # ``assistant_turn``, as of the last record the thread read
        self.sent = 0  # items queued (the proxy's thread)
        self.done = 0  # items run (the live thread)
        self.skipped = 0  # records not diagnosed: once one did not fit, every later one
        self.broken = False
        self._batch: list[Record] | None = None  # records handed while ``held`` (after ``_parts``)
        self._parts: list[list[Record] | Slice] = []  # while ``held``: what came up to the latest ``Slice``

    # -- the proxy's side (its event loop) --------------------------------------------------------

    def record(self, record: dict[str, Any], line: bytes, pos: Pos) -> None:
        if self._batch is not None:
            self._batch.append((record, line, pos))
        else:
            self._records([(record, line, pos)])

    def records(self, batch: Slice) -> None:
        """Records the writer wrote at once: one item of the queue, whose records the live thread makes as it
        reads them (``record.writer.Slice``); while ``held``, after what was handed before it."""
        if self._batch is None:
            self._records(batch)
            return
        if self._batch:
            self._parts.append(self._batch)
            self._batch = []
        self._parts.append(batch)

    @contextmanager
    def held(self) -> Iterator[None]:
        """The records handed meanwhile go on the queue as one item at the end (``serve`` records an answer
        already sent a slice at a time): one lock, one wake-up of the live thread, not one per record."""
        self._batch = []
        try:
            yield
        finally:
            parts, batch, self._parts, self._batch = self._parts, self._batch, [], None
            for part in (*parts, batch):
                if part:
                    self._records(part)

    def _records(self, batch: list[Record] | Slice) -> None:
        """``batch`` queued as one item; when it does not fit whole, a record at a time, as far as they fit."""
        if not self.skipped and self.live._put(self, "record", batch, _cost(batch)):
            self.sent += len(batch)
            return
        for at, one in enumerate(batch):
            if self.skipped:
                self.skipped += len(batch) - at
                return
            if self.live._put(self, "record", [one], _cost([one])):
                self.sent += 1
            else:
                self.skipped = 1
                self.live._say(
                    f"stream-doctor record: no more live findings for {self.conversation.path}: the diagnosis fell "
                    f"{human(self.live.queue_bytes)} behind the stream; it is still recorded, replay it afterwards"
                )

    def exchange_ended(self) -> None:
        if not self.skipped and self.live._put(self, "exchange_ended", None, 0):
            self.sent += 1

    def assistant_turn(self) -> tuple[frozenset[str], frozenset[str]]:
        return self._NOTHING if self.skipped or self.broken else self.turn

    async def settled(self) -> None:
        """Until ``assistant_turn`` has read every record queued so far (a request may continue this
        conversation), not those queued meanwhile (a stream still going is not waited out)."""
        sent = self.sent
        await self.live.until(lambda: self.done >= sent or bool(self.skipped) or self.broken)

    def progress(self) -> int:
        return self.done

    async def room(self) -> None:
        """Until the queue is under half its bound: a writer that can wait (``serve``, recording after its
        write) never fills it, and its conversation keeps its live findings."""
        live = self.live
        await live.until(lambda: live._held <= live.queue_bytes // 2 or bool(self.skipped))

    def close(self) -> None:
        if self.live._put(self, "close", None, 0):
            self.sent += 1

    # -- the live thread's side -------------------------------------------------------------------

    def run(self, kind: str, item: Any) -> None:
        conversation = self.conversation
        try:
            if self.broken:
                pass
            elif kind == "record":
                conversation.records(item)
                if not self._more():  # (else the next record read flushes, or a later one)
                    self.turn = conversation.assistant_turn()
            elif kind == "exchange_ended":
                conversation.exchange_ended()
            elif self.skipped:
                conversation.abandon(self.skipped)
            else:
                conversation.close()
                self.live.closed(conversation)
        except Exception as error:  # noqa: BLE001 - a bug in the diagnosis must never cost a capture
            self.broken = True
            self.live.broken += 1
            self.live._say(
                f"stream-doctor record: no more live findings for {conversation.path} (internal error: "
                f"{type(error).__name__}: {error}); it is still recorded, replay it afterwards"
            )
        finally:
            self.done += len(item) if kind == "record" else 1

    def _more(self) -> bool:
        """This conversation's next record is already queued (the live thread's side; appends only grow it)."""
        try:
            handle, kind, _, _ = self.live._queue[0]
        except IndexError:
            return False
        return handle is self and kind == "record"


def _wake(wakers: list[Callable[[], None]]) -> None:
    for wake in wakers:
        wake()


def _resolve(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


class LiveConversation:
    """One conversation's replay, fed the records of its envelope as they are written."""

    def __init__(self, live: Live, path: str, provider: str | None) -> None:
        self.live = live
        self.path = path
        self.adapter = ADAPTERS.get(provider) if provider is not None else None
        self.options = live.options
        self.header: dict[str, Any] | None = None
        self.turns: list[Turn] = []
        self.pairing = Pairing()
        self.requests = RequestReader(self.adapter.name if self.adapter is not None else "")
        self.fields_seen: set[str] = set()
        self.store = ArgumentStore()
        self.current: LiveTurn | None = None
        self.calls: set[str] = set()  # call ids of the latest response, so far
        self.messages: set[str] = set()  # its message ids
        self.told: tuple[frozenset[str], frozenset[str]] | None = None  # ``assistant_turn``, while both stay
        self.findings: list[Finding] = []
        self.exchanges = 0
        self.closed = False
        self.waiting = 0  # the library verdicts not yet come (``LibraryVerdict``)

    # -- the Listener protocol (record.conversations) ---------------------------------------------

    def record(self, record: dict[str, Any], line: bytes, pos: Pos) -> None:
        self.records(((record, line, pos),))

    def records(self, batch: Iterable[Record]) -> None:
        """The records of a slice, in order (``record`` is one): an event of the turn being read (most of an
        answer) is taken in this loop, held to be translated with the next ones (``flush``: the replay's path,
        not a call per frame); any other record is read by ``_read``. A ``Slice``'s records are the recorder's
        own, which fit the format: they are not checked again."""
        checked = type(batch) is Slice
        for record, line, pos in batch:
            turn = self.current  # (None before a turn's first record, once closed, and for a provider not named)
            if turn is None or turn.kept.wanted or pos.number == 0:
                self._read(record, line, pos, None)
                continue
            frame = to_frame(record, line, pos, None, checked)
            if frame.kind != "event":
                self._read(record, line, pos, frame)
                continue
            turn.count(record, line, pos, frame)
            turn.batch.append(frame)
            if len(turn.batch) >= _BATCH:
                self.flush()

    def _read(self, record: dict[str, Any], line: bytes, pos: Pos, frame: Frame | None) -> None:
        """A record that is not an event of the turn being read: the header, a request (which may begin a turn),
        an event that begins one, and every event while the features that watch a turn want them one by one."""
        if pos.number == 0:
            self.header = record
            return
        if self.adapter is None or self.closed:
            return  # a provider the path does not name: recorded, not diagnosed
        if frame is None:
            frame = to_frame(record, line, pos)
        turn = self.current
        if turn is None or (frame.kind == "request" and (turn.request is not None or turn.frames)):
            if turn is not None:
                self._finish()
            turn = self._begin(len(self.turns) + 1)
        turn.count(record, line, pos, frame)
        if frame.kind == "request":
            turn.request = frame
            self._request(turn, frame)
        self.flush()
        produced = turn.translator.feed(frame) if frame.kind == "event" else [envelope_event(frame)]
        if turn.kept.wanted:
            turn.kept.take(frame, produced)
        self._fed(turn, produced)

    def flush(self) -> None:
        """The event frames held (``LiveTurn.batch``) translated and accumulated as one batch."""
        turn = self.current
        if turn is not None and turn.batch:
            frames, turn.batch = turn.batch, []
            # released, as the replay's: nothing reads these frames again, and a call's consecutive fragments
            # reach the accumulator as one ``ArgsRun``, not an ``ArgsDelta`` each
            self._fed(turn, list(turn.translator.translate(frames, release=True)))

    def _fed(self, turn: LiveTurn, produced: list[Any]) -> None:
        turn.accumulator.feed_all(produced)
        if carried(produced, self.calls, self.messages):  # sets: a frozenset grown by union copied every id
            self.told = None

    def exchange_ended(self) -> None:
        self.exchanges += 1
        if self.current is not None:
            self._finish()

    def assistant_turn(self) -> tuple[frozenset[str], frozenset[str]]:
        self.flush()
        if self.told is None:
            self.told = (frozenset(self.calls), frozenset(self.messages))
        return self.told

    def close(self) -> None:
        if self.closed:
            return
        if self.current is not None:
            self._finish()
        with self.live.emitting:
            self.closed = True
            awaited = self.waiting > 0
        self.store.close()
        if not awaited:  # else the last library verdict to come prints it (``settled``)
            self._summarise()

    def abandon(self, skipped: int) -> None:
        """The live thread fell too far behind and ``skipped`` records of this conversation were not
        read: no judgement of a turn it did not see whole, only the summary of what it found before."""
        if self.closed:
            return
        self.closed = True
        self.current = None
        self.store.close()
        self.live.undiagnosed += skipped
        if self.live.emit is not None:
            summary = lines.summary(self.path, self.exchanges, self.findings)
            self.live.emit(f"{summary}; {skipped} records not diagnosed live (replay it)")

    # -- the replay, a turn at a time -------------------------------------------------------------

    def _begin(self, number: int) -> LiveTurn:
        assert self.adapter is not None
        kept = Kept(self.options, self.adapter.name, None, self.live.profiles, False)
        accumulator = Accumulator(self.adapter.protocol.positional_indices, self.store)
        self.current = LiveTurn(number, self.adapter.translator(), accumulator, kept)
        self.calls, self.messages, self.told = set(), set(), None
        return self.current

    def _info(self, turn: LiveTurn, duration: float | None = None) -> CaptureInfo:
        assert self.adapter is not None
        return CaptureInfo(
            path=self.path,
            container="envelope",
            compressed=None,
            provider=self.adapter.name,
            provider_forced=False,
            size=turn.size,
            frames=turn.frames,
            duration=duration,
            header=self.header,
            interaction=turn.number if turn.number > 1 else None,
            protocol=self.adapter.protocol,
        )

    def _request(self, turn: LiveTurn, frame: Frame) -> None:
        """A request passes: what it sends back of the turns before it is judged now."""
        assert self.adapter is not None
        value = frame.value if isinstance(frame.value, dict) else {}
        method, url = value.get("method"), value.get("url")
        request = RequestInfo(
            frame.pos,
            method if isinstance(method, str) else None,
            url if isinstance(url, str) else None,
            value.get("body"),
        )
        if self.turns and frame.t is not None:
            self._after(self.turns[-1], frame.t)
        empty = Accumulator(self.adapter.protocol.positional_indices).result(self._info(turn), True, (), {})
        placeholder = Turn(
            turn.number, turn.number if turn.number > 1 else None, request, self.requests.facts(request), empty, ()
        )
        self.turns.append(placeholder)
        self._judge((), self.pairing.request(placeholder))

    def _finish(self) -> None:
        """The turn's stream is complete: its findings, then what it gets wrong about the turns before it."""
        turn = self.current
        assert turn is not None and self.adapter is not None
        self.flush()
        self.current = None
        for event in turn.translator.close():  # (the profiles are not fed what no frame sent)
            turn.accumulator.feed(event)
        known = [t for t in turn.times if not isnan(t)]
        duration = max(known) - min(known) if len(known) > 1 else None
        ended_cleanly = not any(p.kind in CUT_KINDS for p in turn.problems)
        stream = turn.accumulator.result(
            self._info(turn, duration), ended_cleanly, turn.problems, turn.translator.counts
        )
        [(stream, _)] = unknown_fields_once([(stream, turn.kept)], self.fields_seen)
        stream = clocked(stream, turn)
        found = diagnose(stream, self.options)
        if turn.kept.clients:
            found = self._clients(stream, turn, found)
        if turn.request is not None:
            placeholder = self.turns[-1]
            whole = replace(placeholder, stream=stream, findings=found)
            self.turns[-1] = whole
        else:  # events before any request
            whole = Turn(
                turn.number,
                turn.number if turn.number > 1 else None,
                None,
                NO_FACTS,
                stream,
                found,
            )
            self.turns.append(whole)
        self.live.found(self, found)
        self._judge((whole,), self.pairing.streamed(whole))

    def _clients(self, stream: AccumulatedStream, turn: LiveTurn, found: tuple[Finding, ...]) -> tuple[Finding, ...]:
        """The turn's findings with the clients' (SD8xx): the models' now, or, when a library can run, none
        yet: its run over the envelope (written to this exchange's end) gives them when it answers."""
        results = [(each.profile, *each.result(False)) for each in turn.kept.clients]
        if not self.live.runs_libraries:
            return diagnose_clients(models_of(stream, results), found, self.options)
        with self.live.emitting:
            behind = len(self.live.verdicts) >= VERDICTS_WAITING
        if behind:  # the runs fell behind the proxy: this turn's verdict is the models', and says why
            note = "the library runs fell behind the proxy; this is the model's answer"
            return diagnose_clients(models_of(stream, results, note), found, self.options)
        verdict = LibraryVerdict(self, stream, turn.number - 1, results)
        with self.live.emitting:
            self.waiting += 1
            self.live.verdicts.append(verdict)
        verdict.thread.start()
        return found

    def settled(self, findings: Iterable[Finding]) -> None:
        """A library's verdict on a turn came (or the model's, at stop): its findings, and the summary once
        the conversation is closed and nothing more is awaited."""
        self.live.found(self, findings)
        with self.live.emitting:
            self.waiting -= 1
            last = self.waiting == 0 and self.closed
        if last:
            self._summarise()

    def _summarise(self) -> None:
        if self.live.emit is not None:
            self.live.emit(lines.summary(self.path, self.exchanges, self.findings))

    def _judge(self, turns: tuple[Turn, ...], problems: list[PairingProblem]) -> None:
        assert self.adapter is not None
        if not turns and not problems:
            return
        window = Window(self.path, self.adapter.name, turns, None, tuple(problems), every=self.turns)
        found = diagnose_conversation(window, self.options)
        self.live.found(self, sorted(found, key=lambda f: f.sort_key))

    def _after(self, previous: Turn, t: float) -> None:
        """The next request came at ``t``: what the previous turn's abandoned calls waited for is known."""
        clock = previous.stream.capture.clock
        if clock is None or all(call.status == "complete" for call in previous.stream.calls):
            return
        rules = [rule for rule in selected_rules(self.options.select, self.options.ignore) if rule.code == _AFTER_TURN]
        if not rules:
            return
        stream = replace(previous.stream, capture=replace(previous.stream.capture, clock=replace(clock, after=t)))
        before = set(previous.findings)
        found = [f for rule in rules for f in rule.check(stream, rule) if f not in before]
        self.turns[previous.number - 1] = replace(previous, stream=stream, findings=previous.findings + tuple(found))
        self.live.found(self, found)
