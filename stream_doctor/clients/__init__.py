"""Client profiles: what each widely used client (or a naive pattern) would hand to the tool.

``PROFILES`` is the registry, in the order ``stream-doctor clients`` lists them. ``run`` feeds a
turn's neutral events to one profile's machine; ``compare`` (in ``compare.py``) sets the result
against the reference calls. Nothing here imports a real client library: that is
``clients/library/``, behind the ``clients`` extra.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable

from stream_doctor.capture.base import Pos
from stream_doctor.clients.base import ClientError, Handoff, Profile, modelled
from stream_doctor.clients.framing import NAMED, UNNAMED, Framing, ends_reading
from stream_doctor.util.choices import unknown
from stream_doctor.util.registry import LazyRegistry
from stream_doctor.values.events import ArgsDelta, BlockStop, Event, Malformed, MessageStop, ToolStart

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream
    from stream_doctor.clients.compare import ClientReview
    from stream_doctor.clients.runs import LibraryRuns

#: Every profile by name, in the order ``stream-doctor clients`` lists them; a profile's module is
#: imported the first time it is asked for (``--client openai-python`` imports one).
PROFILES: LazyRegistry[Profile] = LazyRegistry(
    {
        "anthropic-python": "stream_doctor.clients.anthropic_python:PROFILE",
        "anthropic-typescript": "stream_doctor.clients.anthropic_typescript:PROFILE",
        "openai-python": "stream_doctor.clients.openai_python:PROFILE",
        "openai-node": "stream_doctor.clients.openai_node:PROFILE",
        "langchain": "stream_doctor.clients.langchain:PROFILE",
        "vercel-ai": "stream_doctor.clients.vercel_ai:PROFILE",
        "pydantic-ai": "stream_doctor.clients.pydantic_ai:PROFILE",
        "litellm": "stream_doctor.clients.litellm:PROFILE",
        "naive-start-placeholder": "stream_doctor.clients.naive_start_placeholder:PROFILE",
        "naive-parse-each-fragment": "stream_doctor.clients.naive_parse_each_fragment:PROFILE",
        "naive-parse-until-valid": "stream_doctor.clients.naive_parse_until_valid:PROFILE",
        "naive-next-index": "stream_doctor.clients.naive_next_index:PROFILE",
        "naive-index-concat": "stream_doctor.clients.naive_index_concat:PROFILE",
    }
)


class UnknownClient(LookupError):
    """``--client`` named no profile; the message suggests the closest names."""


def resolve(names: Iterable[str]) -> tuple[Profile, ...]:
    """The profiles ``--client`` names (``all``: every one), in registry order, each once."""
    wanted: set[str] = set()
    for raw in names:
        for name in (part.strip().lower() for part in raw.split(",")):
            if not name:
                continue
            if name == "all":
                wanted.update(PROFILES)
            elif name in PROFILES:
                wanted.add(name)
            else:
                raise UnknownClient(unknown(name, [*PROFILES, "all"], "client"))
    return tuple(PROFILES[name] for name in PROFILES if name in wanted)


def run(
    profile: Profile,
    events: Iterable[Event],
    provider: str = "",
    framings: Iterable[Framing | bool | None] | None = None,
    cut_last: bool = False,
) -> tuple[tuple[Handoff, ...], ClientError | None]:
    """What ``profile`` hands the tool for this turn's events, and the exception it raises, if any.

    ``framings``: for each event, its SSE frame's ``framing_of`` (a bool: only whether the frame had an
    ``event:`` line; None: not SSE); ``cut_last``: the SSE body's last event lacks its closing blank line
    (see ``Running``)."""
    running = Running(profile, provider)
    each = iter(framings) if framings is not None else None
    for event in events:
        if not running.feed(event, next(each, None) if each is not None else None):
            break
    return running.result(cut_last)


class Running:
    """One profile's machine fed a turn's events as they are read (nothing is kept for it).

    Each event goes to the machine with the reference call it belongs to (calls are numbered in
    ToolStart order, as the accumulator numbers them). After an exception the client stops reading:
    only what it handed before that event counts.

    Two facts of the SSE framing reach the machine here, as the libraries' own SSE decoders have
    them (checked on the original bytes by ``tests/clients/test_library_differential.py``): an event
    whose closing blank line never came is never dispatched (so the latest frame's events wait until
    the next frame or ``result(cut_last)``), and a library that dispatches by event name
    (``Machine.reads_event_names``: the Anthropic SDK's ``Stream.__stream__`` matches ``sse.event``)
    ignores a frame without an ``event:`` line.

    A library's machine is also fed what its SSE decoder dispatches where that is not the frame the
    adapter read (``framing.Framing``, checked the same way): data lines written without blank lines
    between them are one event, dispatched at its last line, whose joined data is not JSON (every
    library's decoder: openai-python ``SSEDecoder.decode``, openai-node ``SSEDecoder.decode``,
    eventsource-parser), so the machine gets one ``Malformed`` there instead of a frame per line; and
    data that is not JSON is the end of the stream only if the library's own sentinel test says so
    (``Machine.done_sentinel``: openai-node and the AI SDK compare with ``'[DONE]'`` exactly, so a
    ``[DONE] `` with a trailing space that the adapter reads as the end is JSON they fail to parse).
    A reader that stops at its sentinel (``Machine.sentinel_ends_reading``) is fed nothing after that
    event: an error chunk or a new completion written after ``[DONE]`` never reaches the library.
    Naive patterns are fed the adapter's frames as they are.
    """

    def __init__(self, profile: Profile, provider: str = "") -> None:
        self.profile = profile
        machine = self.machine = profile.machine()
        machine.provider = provider or (profile.providers[0] if len(profile.providers) == 1 else "")
        self.ordinal = -1
        self.by_key: dict[object, int] = {}
        self.last: Pos | None = None
        self.stopped = False
        self.by_name = machine.provider in machine.reads_event_names
        self.held: list[Event] = []  # the latest frame's events, until its end is known
        # what the library's own SSE decoder reads differs from the adapter's frames (see the class docstring)
        self.decodes = profile.kind == "library"
        self.sentinel = None if self.by_name else machine.done_sentinel
        self.decoded: Pos | None = None  # the frame whose first event has been decoded
        self.joined_head: bytes | None = None  # the non-JSON first line of the joined event being read
        self.sentinel_at: Pos | None = None  # the frame whose data ended the library's reading

    def feed(self, event: Event, framing: Framing | bool | None = None) -> bool:
        """Give the machine one event (``framing``: its SSE frame's ``framing_of``, or only whether it had an
        ``event:`` line; None: not SSE); False once the client reads no further (it raised, or read its
        sentinel)."""
        if self.stopped:
            return False
        if isinstance(framing, bool):
            framing = NAMED if framing else UNNAMED
        if framing is not None:
            if not framing.named and self.by_name:
                return True
            if self.decodes and (framing.joined is not None or framing.data is not None):
                decoded = self._decoded(event, framing)
                if decoded is None:
                    return True
                event = decoded
        if self.held and self.held[-1].pos != event.pos:
            self._release()
        if self.sentinel_at is not None and self.sentinel_at != event.pos and self.machine.sentinel_ends_reading:
            self.stopped = True
            return False
        if not self.stopped:
            self.held.append(event)
        return not self.stopped

    def _decoded(self, event: Event, framing: Framing) -> Event | None:
        """The event the library's decoder dispatches in place of ``event`` (None: nothing for it)."""
        first = event.pos != self.decoded
        self.decoded = event.pos
        if framing.joined is not None:
            line, of = framing.joined
            if line == 1 and first:
                self.joined_head = framing.data
            if line < of or not first:
                return None  # a line of an event not dispatched yet, or the frame's other events
            # the joined data is the lines and the newlines between them: a JSON object's line makes it
            # not JSON, and only a prefix test reads it as [DONE] when its first line is
            head = self.joined_head
            if head is not None and self.sentinel is not None and ends_reading(self.sentinel, head + b"\n"):
                self.sentinel_at = event.pos
                return MessageStop(event.pos)
            return Malformed(event.pos, f"not JSON: {of} data lines of one SSE event, joined by newlines")
        data = framing.data
        if self.sentinel is None or data is None:
            return event
        if ends_reading(self.sentinel, data):
            self.sentinel_at = event.pos
            return MessageStop(event.pos) if type(event) is Malformed else event
        if not first:
            return None
        if type(event) is Malformed:
            return event
        return Malformed(event.pos, "not JSON: " + data[:40].decode("utf-8", "replace"))

    def _release(self) -> None:
        held, self.held = self.held, []
        for event in held:
            if self.stopped:
                return
            self._feed(event)

    def _feed(self, event: Event) -> None:
        kind = type(event)
        call: int | None = None
        if kind is ToolStart:
            self.ordinal += 1
            self.by_key[event.key] = call = self.ordinal  # type: ignore[union-attr]
        elif kind is ArgsDelta:
            key = event.key  # type: ignore[union-attr]
            call = self.by_key.get(key, self.ordinal if key is None and self.ordinal >= 0 else None)
        elif kind is BlockStop:
            call = self.by_key.get(event.key)  # type: ignore[union-attr]
        self.machine.feed(event, call)
        self.last = event.pos
        self.stopped = self.machine.error is not None

    def result(self, cut_last: bool = False) -> tuple[tuple[Handoff, ...], ClientError | None]:
        """What the client handed (the stream has ended), and the exception it raised, if any
        (``cut_last``: the SSE body ended inside its last event, which the client never reads, or reads
        after the body ended when its decoder flushes it: ``Machine.reads_unterminated_last_event``)."""
        machine = self.machine
        flushed: Pos | None = None  # the unterminated event, read after the body ended
        if cut_last and machine.reads_unterminated_last_event:
            flushed = self.held[0].pos if self.held else None
        elif cut_last:
            self.held = []
        self._release()
        if machine.error is None:
            machine.close(self.last)
        error = machine.error
        handoffs = machine.handoffs
        if flushed is not None:  # what it handed or raised there, it did after the body ended
            handoffs = [replace(h, at=None) if h.at == flushed else h for h in handoffs]
            if error is not None and error.pos == flushed:
                error = replace(error, pos=None)
        if error is not None and error.pos is not None:
            cut = error.pos.number + (1 if machine.hands_before_raising else 0)
            handoffs = [h for h in handoffs if h.at is not None and h.at.number < cut]
        return tuple(handoffs), error


def review_stream(
    stream: AccumulatedStream, events: Iterable[Event], profiles: Iterable[Profile]
) -> tuple[ClientReview, ...]:
    """Every profile that reads this stream's provider, run over its events and set against its calls."""
    provider = stream.capture.provider
    running = [Running(profile, provider) for profile in profiles if profile.applies_to(provider)]
    for event in events:
        for each in running:
            each.feed(event)
    return reviews(stream, running)


def reviews(
    stream: AccumulatedStream,
    running: Iterable[Running],
    cut_last: bool = False,
    runs: LibraryRuns | None = None,
    turn: int = 0,
) -> tuple[ClientReview, ...]:
    """Each profile's run, fed every event of ``stream`` (``Running``), set against its calls; with
    ``runs``, a library's own run of this turn (the ``turn``-th of the capture) where it answered."""
    from stream_doctor.clients.compare import review

    if runs is None:  # the models answer (a stream given as events, no capture file a library could read)
        return tuple(review(stream, each.profile, *each.result(cut_last), modelled(each.profile)) for each in running)
    return tuple(runs.review(stream, turn, each.profile, *each.result(cut_last)) for each in running)
