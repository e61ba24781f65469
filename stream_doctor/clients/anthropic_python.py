"""anthropic-python: the Anthropic Python SDK's stream helper (``client.messages.stream``).

Follows ``anthropic`` 2.12.0, ``lib/streaming/_messages.py``: ``accumulate_event`` (L464-560)
and ``build_events`` (L366-460), and ``_streaming.py`` ``Stream.__stream__``.

- Until a ``message_start`` arrives, ``MessageStream.__stream__`` passes events through without
  accumulating them (and ``get_final_message()`` then fails its assertion); a second
  ``message_start`` changes nothing, so the blocks of a retried message are appended to the first.
- ``content_block_start`` appends the block to ``snapshot.content``; every later event reads
  ``content[event.index]``: the index is taken as a position. An index past the end raises
  ``IndexError``; after a skipped index it reaches the wrong block.
- ``input_json_delta`` appends ``partial_json`` to a buffer kept per index and re-reads the whole
  buffer with ``jiter.from_json(partial_mode=True)`` (unfinished strings left out, text after the
  first value ignored, and reading stops where a value is followed by anything but ``,`` or a
  closing bracket); a buffer that is not a JSON prefix raises ``ValueError`` ("Unable to parse
  tool parameter JSON from model"), and so does one with a value more than 201 levels deep (jiter's
  recursion limit: 5,000 unclosed ``[`` raise at the 202nd), at the fragment that broke it: before
  anything a later event raises (an ``error`` event, a delta past the content). With no non-empty
  fragment the start event's ``input`` stays.
- The application gets the block on ``content_block_stop`` (a ``ContentBlockStopEvent`` carrying
  it) or from ``get_final_message()``; a block never stopped is still in the final message, with
  what its buffer held (the tool runner only runs tools when ``stop_reason`` is ``tool_use``; a
  loop over ``get_final_message().content`` runs them whatever the stop reason).
- An ``error`` event raises ``APIStatusError``; bytes that are not UTF-8 raise ``UnicodeDecodeError``.
  Not modelled: a *named* event whose data is not JSON raises ``JSONDecodeError`` in the SDK; the
  neutral events do not say whether the frame had a name, so the profile skips such frames.
- ``Stream.__stream__`` dispatches on the SSE ``event:`` name: data without one is ignored, so a
  stream of unnamed events never starts a message and ``get_final_message()`` fails its assertion.
- Fields of the wrong type (``Malformed.wire``, read by ``_anthropic_wire``): ``_models.construct_type``
  validates each event in pydantic's lax mode, so an ``index`` of ``"0"`` is the index 0; an event
  that fails validation is built as it is: a list ``input`` is kept, and a ``partial_json`` that is no
  string raises ``TypeError`` in ``bytes()`` (after ``content[event.index]``, an ``IndexError`` past the
  end; a text block's is never read).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stream_doctor.capture.base import Pos
from stream_doctor.clients._anthropic_wire import python_sdk_read
from stream_doctor.clients._partial import NOTHING, PartialJSONError, partial_parse
from stream_doctor.clients.base import Machine, profile
from stream_doctor.values.events import (
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Malformed,
    MessageStart,
    StreamError,
    ToolStart,
)


@dataclass
class _Block:
    call: int | None  # the reference call (None: none, as for a start whose index was a string)
    server_side: bool = False
    call_id: str | None = None
    name: str | None = None
    start_input: Any = None
    value: Any = None
    stopped: bool = False
    tool: bool = True  # a block that tracks tool input (False: text, thinking, a result …)


@dataclass
class AnthropicSnapshot(Machine):
    """The content list the SDK keeps, indexed by position."""

    reads_event_names = ("anthropic",)
    partial_strings: str = "drop"
    started: bool = False
    content: list[_Block] = field(default_factory=list)
    buffers: dict[int, list[str]] = field(default_factory=dict)  # by event index, as json_bufs is
    places: dict[int, list[Pos]] = field(default_factory=dict)  # where each fragment came

    def feed(self, event: Event, call: int | None) -> None:
        kind = type(event)
        if kind is Malformed and event.wire:  # type: ignore[union-attr]
            read = python_sdk_read(event)  # type: ignore[arg-type]
            if read is not None:
                event, kind = read, type(read)
        if kind is MessageStart:
            self.started = True
            return
        if isinstance(event, StreamError):
            message = f"the stream sent an error event ({event.error_type})"
            self.fail(event.pos, "APIStatusError", message, provider_error=True)
            return
        if isinstance(event, Malformed):
            # The SSE decoder reads bytes as UTF-8 and raises; other frames that are not JSON come from
            # events without a name (skipped) or a last event cut off (never dispatched).
            if "UTF-8" in event.reason:
                self.fail(event.pos, "UnicodeDecodeError", "an event's bytes are not UTF-8")
            elif self.started and event.reason.startswith(_INDEXED) and "without an integer 'index'" in event.reason:
                # accumulate_event reads ``content[event.index]`` of a delta or stop: a missing index is
                # None (the event is built without validation), a string is no list index either
                self.fail(event.pos, "TypeError", "list indices must be integers or slices, not NoneType")
            elif self.started and event.reason == "input_json_delta whose partial_json is not a string":
                # accumulate_event (lib/streaming/_messages.py) reads ``content[event.index]`` (IndexError
                # past the end), then ``bytes(event.delta.partial_json, "utf-8")`` on a tool_use block's
                # delta: None or a number is a TypeError; a text block's is not read
                index = dict(event.wire).get("index")
                if not isinstance(index, int) or not -len(self.content) <= index < len(self.content):
                    self.fail(event.pos, "IndexError", f"list index out of range: a delta for block {index!r}")
                elif self.content[index].tool:
                    self.fail(event.pos, "TypeError", "encoding without a string argument")
            return
        if kind not in (ToolStart, BlockStart, ArgsDelta, BlockDelta, BlockStop):
            return
        if not self.started:
            return  # before message_start, MessageStream passes events through without accumulating
        if kind is ToolStart:
            assert isinstance(event, ToolStart)
            # a list input stays a list (construct_type keeps what fails validation as it is)
            start = event.start_input if isinstance(event.start_input, (dict, list)) else {}
            self.content.append(_Block(call, event.server_side, event.call_id, event.name, start, start))
        elif kind is BlockStart:
            self.content.append(_Block(None, tool=False))
        elif kind is ArgsDelta:
            assert isinstance(event, ArgsDelta)
            self._delta(event)
        elif kind is BlockDelta:
            index = event.key  # type: ignore[union-attr]
            # accumulate_event reads ``content[event.index]`` for a text or thinking delta too
            if not isinstance(index, int) or index >= len(self.content):
                self.fail(event.pos, "IndexError", f"list index out of range: a delta for block {index!r}")
        else:
            assert isinstance(event, BlockStop)
            index = event.key
            if not isinstance(index, int) or index >= len(self.content):
                self.fail(event.pos, "IndexError", f"list index out of range: content_block_stop for index {index!r}")
                return
            block = self.content[index]
            if block.tool:  # every stop of the position hands its block, again if it repeats
                block.stopped = True
                self._hand(block, index, event.pos, "content_block_stop")

    def _delta(self, event: ArgsDelta) -> None:
        index = event.key
        if not isinstance(index, int) or index >= len(self.content):
            self.fail(event.pos, "IndexError", f"list index out of range: a delta for block {index!r}")
            return
        block = self.content[index]
        if event.delta_type != "input_json_delta" or not block.tool:
            return  # the SDK applies a delta only to a block of the matching type
        self.buffers.setdefault(index, []).append(event.fragment)
        self.places.setdefault(index, []).append(event.pos)

    def fail(
        self, pos: Pos | None, exception: str, message: str, call: int | None = None, provider_error: bool = False
    ) -> None:
        # The SDK re-reads a block's buffer on every delta, so a buffer an earlier fragment broke raised
        # ValueError there, before this exception (an error event, a delta past the content): the open
        # blocks' buffers are read now, once, as their stop would read them.
        if self.error is None:
            for index, block in enumerate(self.content):
                if block.tool and not block.stopped and index in self.buffers:
                    self._parsed(index, block)
        super().fail(pos, exception, message, call, provider_error)

    def _parsed(self, index: int, block: _Block) -> tuple[str | None, Any] | None:
        """The block's argument text and value; None when its buffer broke (the SDK's ValueError, at the
        fragment that broke it)."""
        try:
            return self._value(index, block)
        except PartialJSONError as error:
            where = _fragment_at(self.buffers[index], self.places[index], error.offset)
            message = f"Unable to parse tool parameter JSON from model: {error}"
            super().fail(where, "ValueError", message, block.call)
            return None

    def _value(self, index: int, block: _Block) -> tuple[str | None, Any]:
        buffer = self.buffers.get(index)
        text = "".join(buffer) if buffer is not None else None
        if not text:
            return text, block.start_input
        value = partial_parse(text, self.partial_strings, trailing=True, blank_ok=False)  # type: ignore[arg-type]
        return text, ({} if value is NOTHING else value)

    def _hand(self, block: _Block, index: int, at: Pos | None, when: str) -> None:
        if not block.tool:
            return
        parsed = self._parsed(index, block)
        if parsed is None:
            return
        text, value = parsed
        if not block.server_side:
            calls = (block.call,) if block.call is not None else ()
            self.hand(calls, block.call_id, block.name, text, value, at, when)

    def close(self, end: Pos | None) -> None:
        if not self.started:
            self.fail(None, "AssertionError", "get_final_message(): the stream never started a message")
            return
        for index, block in enumerate(self.content):
            if block.tool and not block.stopped:
                self._hand(block, index, None, "get_final_message() (block never stopped)")


#: the events whose ``index`` accumulate_event uses as a position in the content list
_INDEXED = ("content_block_delta", "content_block_stop")


def _fragment_at(texts: list[str], places: list[Pos], offset: int) -> Pos:
    """Where the fragment holding character ``offset`` of the joined texts came."""
    end = 0
    for text, place in zip(texts, places, strict=False):
        end += len(text)
        if offset < end:
            return place
    return places[-1]


PROFILE = profile(
    "anthropic-python",
    "Anthropic Python SDK, messages.stream()",
    "library",
    "content indexed by position; jiter partial parse per delta; block handed at content_block_stop",
    providers=("anthropic",),
    library="anthropic",
    version="2.12.0",
    sources=(
        "anthropic/lib/streaming/_messages.py:464-560 (accumulate_event)",
        "anthropic/lib/streaming/_messages.py:366-460 (build_events)",
        "anthropic/_streaming.py (Stream.__stream__: ping skipped, error event raises)",
    ),
    runs_in_python=True,
)(AnthropicSnapshot)
