"""anthropic-typescript: the Anthropic TypeScript SDK's ``MessageStream`` (``client.messages.stream``).

Follows ``@anthropic-ai/sdk`` 1.12.0 on npm (``lib/MessageStream.js``: ``#accumulateMessage``,
``#addStreamEvent``, ``#endRequest``; ``internal/message-stream-utils.js`` ``withLazyInput``), and is
checked against it under Node (``tests/clients/test_node_agreement.py``, and on the original bytes
and generated streams ``test_node_differential.py``).

- An SSE event without an ``event:`` line is skipped (``Stream.fromSSEResponse``), so a stream sent
  without event names ends in ``request ended without sending any chunks``.
- Events before ``message_start`` are ignored; a stream that never sends one ends in
  ``request ended without sending any chunks``. A second ``message_start`` throws ("Unexpected event
  order"), so a stream spliced after a retry fails instead of being appended.
- A delta reads ``snapshot.content.at(event.index)`` and writes ``content[event.index]``: an index
  past the end, negative or missing loses the delta without an error. Each ``input_json_delta``
  replaces the block with a new object (``withLazyInput``), so a block handed at a stop and given a
  delta later (a reused index) is read again from ``finalMessage()`` with its new input.
- ``input_json_delta`` appends to a buffer kept on the block (from then on the start input is gone:
  an empty buffer reads ``{}``); ``input`` is parsed lazily with the
  vendored ``partialParse`` (``_partial_vendored``: a dangling string, even after a whole value, is
  dropped), first at the block's ``content_block_stop``: text that is still not JSON throws there
  (an ``AnthropicError``).
- ``content_block_stop`` emits the ``contentBlock`` event with ``content.at(-1)``: the *last* block
  started, whichever block the stop is for. ``finalMessage()`` exists only after ``message_stop``;
  blocks never stopped are then read from it. Without a dispatched ``message_stop`` (none, or
  one whose closing blank line never came: the SDK's decoder does not flush it) it rejects ("stream
  ended without producing a Message with role=assistant"), whatever was handed before.
- An ``error`` event throws ``APIError``.
- Fields of the wrong type (``Malformed.wire``): nothing validates the events, so an ``index`` of
  ``"0"`` is the block 0 (``content.at("0")``, ``content["0"]``), a ``partial_json`` of another type
  is appended as JavaScript's ``+`` writes it (``null`` is the text ``"null"``) and a list ``input``
  is pushed as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stream_doctor.capture.base import Pos
from stream_doctor.clients._anthropic_wire import javascript_index, javascript_string, read_as
from stream_doctor.clients._partial_vendored import VendoredParseError, vendored_partial_parse
from stream_doctor.clients.base import Machine, profile
from stream_doctor.values.events import (
    ArgsDelta,
    BlockStart,
    BlockStop,
    Event,
    Malformed,
    MessageStart,
    MessageStop,
    StreamError,
    ToolStart,
)

_FAILED: Any = object()


@dataclass
class _Block:
    call: int | None
    server_side: bool = False
    call_id: str | None = None
    name: str | None = None
    start_input: Any = None
    texts: list[str] = field(default_factory=list)
    places: list[Pos] = field(default_factory=list)
    emitted: bool = False
    tool: bool = True  # a block that tracks tool input (its call None: a start whose index was a string)


@dataclass
class MessageStreamTS(Machine):
    # core/streaming.js Stream.fromSSEResponse: `if (sse.event === null) continue`
    reads_event_names = ("anthropic",)
    started: bool = False
    stopped: bool = False
    content: list[_Block] = field(default_factory=list)

    def feed(self, event: Event, call: int | None) -> None:
        kind = type(event)
        if kind is Malformed and event.wire:  # type: ignore[union-attr]
            read = _as_javascript_reads(event)  # type: ignore[arg-type]
            if read is not None:
                event, kind = read, type(read)
        if isinstance(event, Malformed) and event.reason.startswith("not JSON") and event.reason not in _PARSED:
            # Stream.fromSSEResponse: a named event's data goes to JSON.parse, which throws
            self.fail(event.pos, "AnthropicError", "JSON.parse: " + event.reason)
            return
        if kind is MessageStart:
            if self.started:
                self.fail(
                    event.pos,
                    "AnthropicError",
                    'Unexpected event order, got message_start before receiving "message_stop"',
                )
            self.started = True
            return
        if kind is StreamError:
            self.fail(event.pos, "APIError", "the stream sent an error event", provider_error=True)
            return
        if kind not in (ToolStart, BlockStart, ArgsDelta, BlockStop, MessageStop):
            return
        if not self.started:
            return  # no snapshot yet: #accumulateMessage ignores the event
        if kind is ToolStart:
            assert isinstance(event, ToolStart)
            # #accumulateMessage pushes ``{...event.content_block}``: a list input stays a list
            start = event.start_input if isinstance(event.start_input, (dict, list)) else {}
            self.content.append(_Block(call, event.server_side, event.call_id, event.name, start))
        elif kind is BlockStart:
            self.content.append(_Block(None, tool=False))
        elif kind is ArgsDelta:
            assert isinstance(event, ArgsDelta)
            index = event.key
            if not isinstance(index, int) or not 0 <= index < len(self.content):
                # content.at(index) is undefined, or the new block is written to content[index], which for
                # a missing or negative index is a property no later read sees: the delta is lost
                return
            block = self.content[index]
            if block.tool and event.delta_type == "input_json_delta":
                block.texts.append(event.fragment)
                block.places.append(event.pos)
                # withLazyInput makes a new block object: the final message holds one the contentBlock
                # event never handed, even when the old one was (unless message_stop already took the
                # final message: maybeParseMessage copies it)
                block.emitted = block.emitted and self.stopped
        elif kind is BlockStop:
            assert isinstance(event, BlockStop)
            index = event.key
            if isinstance(index, int) and -len(self.content) <= index < len(self.content):
                stopped = self.content[index]  # its input is parsed now (withLazyInput's getter)
                if stopped.tool and stopped.texts and self._parse(stopped, event.pos) is _FAILED:
                    return
            if self.content:
                last = self.content[-1]  # content.at(-1): the last block, not necessarily the one stopped
                if last.tool:
                    self._hand(last, event.pos, "content_block_stop (contentBlock event: the last block)")
        else:
            self.stopped = True

    def _parse(self, block: _Block, at: Pos | None) -> Any:
        """``block.input`` as the lazy getter reads it, or ``_FAILED``: the start input until a delta
        came, then the buffer parsed (``{}`` for an empty one: an empty delta drops the start input)."""
        if not block.texts:
            return block.start_input
        text = "".join(block.texts)
        if not text:
            return {}
        try:
            return vendored_partial_parse(text)
        except VendoredParseError as error:
            self.fail(at, "AnthropicError", f"partialParse: {error}", block.call)
            return _FAILED

    def _hand(self, block: _Block, at: Pos | None, when: str) -> None:
        text = "".join(block.texts)
        value = self._parse(block, at)
        if value is _FAILED:
            return
        block.emitted = True
        if not block.server_side:
            calls = (block.call,) if block.call is not None else ()
            self.hand(calls, block.call_id, block.name, text or None, value, at, when)

    def close(self, end: Pos | None) -> None:
        if not self.started:
            self.fail(None, "AnthropicError", "request ended without sending any chunks")
            return
        if not self.stopped:
            # #getFinalMessage reads the messages pushed at message_stop: none, and finalMessage()
            # rejects, whatever the contentBlock events already handed
            self.fail(None, "AnthropicError", "stream ended without producing a Message with role=assistant")
            return
        for block in self.content:
            if block.tool and not block.emitted:
                self._hand(block, None, "finalMessage() (block never stopped)")


#: data the adapter could not use that JSON.parse still reads or never sees: empty data (``if (!sse.data)
#: continue``), bytes that are not UTF-8 (the TextDecoder has replaced them before JSON.parse)
_PARSED = ("not JSON: empty", "not JSON: not valid UTF-8")


def _as_javascript_reads(event: Malformed) -> Event | None:
    """The event #accumulateMessage makes of a frame with a field of the wrong type: an index ``"0"``
    is the block 0 (``content.at("0")``, ``content["0"] = …``); a ``partial_json`` that is not a
    string is appended to the buffer as JavaScript's ``+`` writes it (``'' + null`` is ``"null"``)."""
    wire = dict(event.wire)
    fragment = javascript_string(wire["partial_json"]) if "partial_json" in wire else None
    return read_as(event, lambda index: index if type(index) is int else javascript_index(index), fragment)


PROFILE = profile(
    "anthropic-typescript",
    "Anthropic TypeScript SDK, MessageStream",
    "library",
    "contentBlock event hands the last block started; input parsed at the block's stop; deltas past the end dropped",
    providers=("anthropic",),
    library="@anthropic-ai/sdk",
    version="1.12.0",
    sources=(
        "lib/MessageStream.js (#accumulateMessage, #addStreamEvent, #endRequest)",
        "internal/message-stream-utils.js (withLazyInput)",
        "_vendor/partial-json-parser/parser.js (partialParse)",
    ),
)(MessageStreamTS)
