"""A plan's envelope lines, kept from its first answer: a later answer written whole is recorded by filling
in its times.

``serve`` knows what it writes: the plan's reads. The recorder (``record.exchange.RecordedExchange``, the
proxy's) cuts them into events, reads each payload and writes a record for it: the same bytes for every
answer of that plan but the ``t`` of each event (when the read that completed it went out). The first answer
of a plan that went out whole is recorded by the recorder, and ``Lines`` keeps, of each event record it
wrote, the read that completed it and its line after the ``t``, and then the recorder's state after the last
read. A later answer whose every read went out is recorded by joining ``{"sd":"event","t":``, its time and
the kept rest of each line, its records made again as the recorder makes them (by the live diagnosis'
thread, as it reads them: ``record.writer.Slice``), and ends as the recorder would (``settle``: that state,
then ``RecordedExchange.end`` as ever): the envelope and the records the live diagnosis reads are those the
recorder gives read by read (tests/serve/test_lines.py).

An answer the application left before its last read is recorded by the recorder, as before: what it got,
cut where it stopped. Lines are not kept for a plan whose recording came near a limit (``--max-capture``, a
body the parser stops reading): there what is recorded could depend on the bytes each ``t`` takes.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from typing import Any, NamedTuple

import orjson

from stream_doctor.capture.base import Pos
from stream_doctor.record.exchange import RecordedExchange, stream_end
from stream_doctor.record.parse import BodyParser
from stream_doctor.record.writer import EnvelopeWriter
from stream_doctor.serve.wire import Plan, Recorded
from stream_doctor.values.protocol import StreamEnd

#: What every event record's line begins with; its ``t`` follows.
HEAD = b'{"sd":"event","t":'
#: More than the bytes a ``t`` can take in a line (orjson writes a float in at most 24): lines are kept only
#: when the recording stays that much per event under ``--max-capture``, so that no answer's times can bring
#: the recorder to its limit.
_T_BYTES = 32


class _End(NamedTuple):
    """The recorder after the plan's last read: what ``RecordedExchange.end`` reads of it."""

    parser: BodyParser
    size: int
    events: int
    oversized: int
    finished: bool


class Lines:
    """Each event record of a plan: the read that completed it (``places``), its line after ``t``
    (``rests``), and how its record is made again: for a JSON payload, the event's name (``names``) and the
    payload's text (``payloads``, inside the rest); else the record itself (``others``), copied."""

    def __init__(self) -> None:
        self.places = array("q")
        self.rests: list[bytes] = []
        self.names: list[str | None] = []
        self.payloads: list[memoryview | None] = []
        self.others: list[dict[str, Any] | None] = []
        self.end: _End | None = None  # (until the plan's last read is kept)

    @contextmanager
    def taking(self, writer: EnvelopeWriter, first: int) -> Iterator[Callable[[list[int]], bool]]:
        """The records ``writer`` writes meanwhile (the recorder's, of the reads from ``first`` on) seen as
        they go to its observer; the context gives the function that keeps them, given the read of each
        (``RecordedExchange.chunks``'s answer), and says whether all could be."""
        seen: list[tuple[dict[str, Any], bytes]] = []
        observe = writer.observe

        def both(record: dict[str, Any], line: bytes, pos: Pos) -> None:
            seen.append((record, line))
            if observe is not None:
                observe(record, line, pos)

        writer.observe = both
        try:
            yield (
                lambda places: (
                    len(places) == len(seen)
                    and all(
                        self._add(record, line, first + place)
                        for (record, line), place in zip(seen, places, strict=True)
                    )
                )
            )
        finally:
            writer.observe = observe

    def _add(self, record: dict[str, Any], line: bytes, place: int) -> bool:
        head = HEAD + orjson.dumps(record["t"])
        if record["sd"] != "event" or not line.startswith(head):
            return False
        rest = line[len(head) :]
        name = record.get("event")
        before = (b',"event":' + orjson.dumps(name) if name is not None else b"") + b',"data":'
        plain = len(record) == (4 if name is not None else 3) and "data" in record
        self.places.append(place)
        self.rests.append(rest)
        self.names.append(name)
        if plain and rest.startswith(before) and rest.endswith(b"}"):
            self.payloads.append(memoryview(rest)[len(before) : -1])
            self.others.append(None)
        else:  # (a record the live diagnosis may hold: a copy, not the one it was handed)
            self.payloads.append(None)
            self.others.append(deepcopy(record))
        return True

    def ended(self, exchange: RecordedExchange) -> bool:
        """The recorder after the plan's last read, kept (before its ``end``); False where lines are not kept."""
        if exchange.full or exchange.written + _T_BYTES * exchange.events >= exchange.max_capture:
            return False
        parser = deepcopy(exchange.parser)
        self.end = _End(parser, exchange.size, exchange.events, exchange.oversized, exchange.finished)
        return True

    def write(self, writer: EnvelopeWriter, first: int, event: int, times: Sequence[float]) -> tuple[int, int]:
        """The records of the reads from ``first`` (each at its time in ``times``), from the ``event``-th
        on; returns the next event and the bytes written. The lines are written now; the records are made as
        the writer's observer reads them (``record.writer.Slice``: on the live diagnosis' thread)."""
        places, rests = self.places, self.rests
        end = bisect_left(places, first + len(times), event)
        stamped: list[float] = []  # each record's time
        lines: list[bytes] = []
        at, stamp = -1, b""
        for number in range(event, end):
            place = places[number]
            t = times[place - first]
            if place != at:
                at, stamp = place, HEAD + orjson.dumps(t)
            stamped.append(t)
            lines.append(stamp + rests[number])
        return end, writer.events(lambda: self.records(event, stamped), lines)

    def records(self, event: int, times: list[float]) -> Iterator[dict[str, Any]]:
        """The event records from the ``event``-th, one at each of ``times``, made again as the recorder made them:
        a JSON payload read once more (as ``record.parse.event_record`` makes it: a value of its own each time),
        else a copy."""
        names, payloads, others = self.names, self.payloads, self.others
        for number, t in enumerate(times, event):
            payload = payloads[number]
            if payload is None:
                record = deepcopy(others[number])
                assert record is not None
                record["t"] = t
            else:
                name = names[number]
                record = {"sd": "event", "t": t}
                if name is not None:
                    record["event"] = name
                record["data"] = orjson.loads(payload)
            yield record

    def settle(self, exchange: RecordedExchange) -> None:
        """``exchange``, which recorded every read from these lines, left as the recorder is after them, so
        that its ``end`` writes what the recorder's would."""
        assert self.end is not None
        end = self.end
        exchange.parser = deepcopy(end.parser)
        exchange.size, exchange.events, exchange.oversized = end.size, end.events, end.oversized
        exchange.finished = end.finished


class PlanLines:
    """A plan, how its body is recorded, and its lines once an answer has kept them (``making``: one is). The
    second answer that goes out whole keeps them: keeping costs a third of a recording more, and a plan
    answered once (a ``--matrix`` run's, a test's) would pay it for nothing."""

    def __init__(self, plan: Plan, content_type: str | None, ending: StreamEnd) -> None:
        self.plan = plan
        self.content_type = content_type
        self.ending = ending
        self.lines: Lines | None = None
        self.whole = 0  # answers of it that went out whole: the second keeps the lines
        self.making = False
        self.refused = False  # (its lines cannot be kept: no answer tries again)

    def exchange(self, writer: EnvelopeWriter) -> RecordedExchange:
        """The recorder of an answer of this plan into ``writer``."""
        return RecordedExchange(writer, self.content_type, None, self.ending)


class Kept:
    """A server's plans with their lines: for each recorded response (and whether it is played as
    recorded, a retry's answer), those of the latest plan made for it, kept while the next plan is the same
    (a variant's plan is seeded: the same each time; a plan function that varies gets lines of each plan)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[int, bool], tuple[Recorded, PlanLines]] = {}

    def lines(self, recorded: Recorded, plan: Plan, retry: bool) -> PlanLines:
        key = (id(recorded), retry)
        kept = self._kept.get(key)
        if kept is not None and kept[0] is recorded and kept[1].plan == plan:
            return kept[1]
        lines = PlanLines(plan, dict(plan.headers).get("Content-Type"), stream_end(recorded.provider))
        self._kept[key] = (recorded, lines)
        return lines
