"""vercel-ai: the Vercel AI SDK's ``streamText`` over its OpenAI-compatible and Anthropic providers.

Follows ``ai`` 7.0.173, ``@ai-sdk/openai-compatible`` 3.0.92, ``@ai-sdk/provider-utils`` 5.0.81 and
``@ai-sdk/anthropic`` 4.0.105 on npm, and is checked against them under Node
(``tests/clients/test_node_agreement.py``, ``test_node_differential.py``). The OpenAI-compatible
provider (``doStream``) reads the ``tool_calls[]`` of ``choices[0]`` of each chunk, whatever the
choice's ``index``, and not the legacy ``function_call``; its correlation is ported in
``_tool_call_tracker`` (deltas held per index until a name arrives, then
``StreamingToolCallTracker``: id, index and name precedence, a call holding a whole JSON value takes
no more, a reused id gets a generated one, calls emitted at the flush by index). The Anthropic
provider emits a ``tool-call`` at ``content_block_stop`` with the buffered input (the start event's
input, when not empty, followed by the deltas); blocks never stopped are dropped (a block started at
the index of a call not stopped yet replaces it: ``contentBlocks[value.index]``); a ``tool_use``
start without an id fails the chunk's schema and opens no call; a second ``message_start`` while one
is open is an error and nothing after it is read. ``streamText`` runs tools only when the step
finished with ``stop`` or ``tool-calls`` (PR #19066).

- Arguments are never taken as complete because they parse (PR #16838 moved that to the flush).
- An empty or whitespace-only buffer is ``{}`` (``doParseToolCall`` trims); text that does not parse
  gives an ``invalid`` tool call, not run. A non-empty start input is the buffer's beginning and the
  deltas are appended to it, so a start input with deltas is invalid.
- Anthropic: the finish part comes at ``message_stop``; a stream that ends after a call without one
  (or whose ``message_stop`` lacks its closing blank line) ends the step ``interrupted``: nothing runs.
- A Chat chunk with a field of the wrong type (``index`` not a number; ``id``, ``name`` or ``arguments``
  neither a string nor null) fails the provider's chunk schema: its calls are lost, and the step's finish
  reason is ``error`` (nothing runs) unless a later chunk brings a finish_reason.
- A new call without a name (an index never named, handed on at the flush) throws
  ``InvalidResponseDataError``.
- An error in the stream is an ``error`` part (not thrown). On the OpenAI-compatible provider an error
  chunk (``"error" in chunk.value``) and an event whose data is not JSON (``safeParseJSON`` fails; a
  ``[DONE] `` with a trailing space too: ``parseJsonEventStream`` skips only data that is exactly
  ``[DONE]``) set the finish reason to ``error``, so nothing runs unless a later chunk brings a
  finish_reason (``doStream``'s transform). The Anthropic provider only enqueues the error part (an
  ``error`` event, data that is not JSON): its finish part still comes at ``message_stop``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._tool_call_tracker import NamelessCall, OpenAICompatibleTracker
from stream_doctor.clients._wire import Fragment, WireMachine
from stream_doctor.clients.base import parse_json, profile
from stream_doctor.clients.framing import SENTINEL_READERS
from stream_doctor.values.events import MISSING, Event, KeepAlive, Malformed, StreamError


@dataclass
class _Call:
    calls: list[int]
    call_id: str | None
    name: str | None
    index: int | None
    texts: list[str] = field(default_factory=list)
    start_input: Any = None
    stopped_at: Pos | None = None
    server_side: bool = False
    block: bool = False  # an Anthropic content block (emitted at its stop), not a Chat Completions call


@dataclass
class StreamText(WireMachine):
    calls: list[_Call] = field(default_factory=list)
    by_key: dict[Hashable, _Call] = field(default_factory=dict)  # Anthropic: block index
    errored: bool = False
    message_open: bool = False
    halted: bool = False  # the Anthropic provider stopped reading (a second message_start)
    message_stopped: bool = False  # Anthropic: a message_stop was read (the provider's finish part)
    tracker: OpenAICompatibleTracker = field(default_factory=OpenAICompatibleTracker)
    chunk: list[Fragment] = field(default_factory=list)  # the latest Chat chunk's fragments, read at the next
    refused: Pos | None = None  # the latest Chat chunk that set the finish reason to "error" (see the docstring)
    done_sentinel = SENTINEL_READERS["vercel-ai"]  # else safeParseJSON: an error part when it fails
    # @ai-sdk/provider-utils parseJsonEventStream: `if (data === "[DONE]") return;` drops that event and reads on
    sentinel_ends_reading = False

    peeked: bool = False  # Anthropic: doStream has read the first chunk after stream-start

    def feed(self, event: Event, call: int | None) -> None:
        if self.provider == "anthropic" and not self.peeked and type(event) is not KeepAlive:
            self.peeked = True
            if type(event) is StreamError or (type(event) is Malformed and event.reason.startswith("not JSON")):
                # doStream reads the first chunk (past pings) and throws an APICallError when it is an error
                # part: streamText reports the error and no part of the stream is read
                self.halted = True
        if not self.halted:
            super().feed(event, call)

    def message_start(self, pos: Pos) -> None:
        if self.provider == "anthropic" and self.message_open:
            # "Received message_start for message … while message … is still open": an error part,
            # and nothing after it is read
            self.errored = self.halted = True
        self.message_open = True

    def message_stop(self, pos: Pos) -> None:
        self.message_open = False
        self.message_stopped = True

    def fragment(self, fragment: Fragment) -> None:
        if self.halted:
            return
        if self.provider == "anthropic":  # Anthropic: blocks by index
            if fragment.first:
                if fragment.call_id is None or any(name == "input" for name, _ in fragment.wire):
                    # the chunk fails the provider's schema (an error part): no call is opened; its
                    # content_block_start wants a string id and an object input
                    # (``z.record(z.string(), z.unknown()).optional()``: a list or null fails)
                    return
                call = _Call(
                    [fragment.call] if fragment.call is not None else [],
                    fragment.call_id,
                    fragment.name,
                    fragment.index,
                    start_input=fragment.start_input,
                    server_side=fragment.server_side,
                    block=True,
                )
                self.calls.append(call)
                self.by_key[fragment.key] = call
            else:
                held = self.by_key.get(fragment.key)
                if held is not None and held.stopped_at is None and fragment.delta_type == "input_json_delta":
                    held.texts.append(fragment.arguments or "")
            return
        if fragment.block_type == "function_call":
            return  # the OpenAI-compatible provider does not read the legacy function_call
        if self.chunk and self.chunk[0].pos != fragment.pos:
            self._read_chunk()
        self.chunk.append(fragment)

    def _read_chunk(self) -> None:
        """One Chat chunk's fragments. A field of the wrong type (``index`` not a number, ``id``, ``name`` or
        ``arguments`` neither a string nor null) fails the chunk schema: doStream's transform enqueues an
        error part for the whole chunk and sets the finish reason to "error" until a later finish_reason."""
        fragments, self.chunk = self.chunk, []
        if any(value is not None for fragment in fragments for _, value in fragment.wire):
            self.refused = fragments[0].pos
            return
        for fragment in fragments:
            self._read(fragment)

    def _read(self, fragment: Fragment) -> None:
        try:
            self.tracker.delta(fragment.index, fragment.call_id, fragment.name, fragment.arguments, fragment.call)
        except NamelessCall as error:
            self.fail(fragment.pos, "InvalidResponseDataError", str(error), fragment.call)

    def stop(self, key: Hashable, call: int | None, pos: Pos) -> None:
        if self.halted:
            return
        if self.provider != "anthropic":
            # the adapter stops a choice's calls at its finish_reason: a chunk whose choices[0] has one (a
            # second choice's too, whose finish is no Finish event) sets doStream's finishReason again
            self.finish_pos = pos if self.finish_pos is None or self.finish_pos.number < pos.number else self.finish_pos
        held = self.by_key.get(key)
        if held is not None and held.stopped_at is None:
            held.stopped_at = pos

    def block_start(self, key: Hashable, pos: Pos) -> None:
        if self.provider == "anthropic":
            # doStream's content_block_start sets ``contentBlocks[value.index]`` for a text or thinking block
            # too: a tool call still open at that index is replaced, never stopped, and dropped
            self.by_key.pop(key, None)

    def stream_error(self, pos: Pos) -> None:
        if self.provider != "anthropic":
            self.refused = pos  # an error chunk: finishReason "error" until a later finish_reason

    def malformed(self, reason: str, pos: Pos) -> None:
        if reason.startswith("not JSON") and self.provider != "anthropic":
            # parseJsonEventStream's safeParseJSON fails: openai-compatible's doStream sets finishReason
            # "error" (until a later finish_reason) and enqueues an error part; @ai-sdk/anthropic's enqueues
            # the error part alone and its finish part still comes at message_stop (the tools run)
            self.refused = pos

    def end(self, end: Pos | None) -> None:
        if self.chunk:
            self._read_chunk()
        # the latest refused or error chunk's "error" is the step's finish reason unless a finish_reason came after
        refused = self.refused is not None and (
            self.finish_pos is None or self.finish_pos.number <= self.refused.number
        )
        runs = not self.errored and not refused and self.finish in ("tool_calls", "end")
        if self.provider == "anthropic" and not self.message_stopped:
            # the provider emits its finish part at message_stop; a stream that ends after a tool
            # call without one ends the step "interrupted" (doStream's flush), and nothing runs
            runs = False
        if self.provider != "anthropic":
            try:
                tracked = self.tracker.flush()
            except NamelessCall as error:
                # the flush runs once the body has ended: the library's error comes after every frame
                self.fail(None, "InvalidResponseDataError", str(error))
                return
            self.calls = [_Call(t.calls, t.call_id, t.name, t.index, [t.arguments]) for t in tracked]
        for call in self.calls:
            if call.server_side:
                continue
            anthropic = call.block
            if anthropic and call.stopped_at is None:
                continue  # never stopped: the Anthropic provider drops it
            if call.name is None:
                self.fail(end, "InvalidResponseDataError", "a tool call without a name")
                return
            text = "".join(call.texts)
            if isinstance(call.start_input, dict) and call.start_input:
                # the Anthropic provider starts the input with the start event's (JSON.stringify)
                # and appends every delta to it
                text = json.dumps(call.start_input, separators=(",", ":"), ensure_ascii=False) + text
            # doParseToolCall: text that is only whitespace is the input {}
            value = parse_json(text) if text.strip() else {}
            invalid = value is MISSING
            at = call.stopped_at if anthropic else None
            when = "content_block_stop (tool-call part)" if anthropic else "end of stream (flush)"
            if not runs:
                # an error part sets the step's finish reason to "error" (openai-compatible doStream)
                finished = "error" if self.errored or refused else self.finish or "no finish reason"
                self.hand(
                    tuple(call.calls),
                    call.call_id,
                    call.name,
                    text,
                    MISSING,
                    at,
                    f"{when}; not run: the step finished with {finished}",
                    True,
                )
                continue
            self.hand(tuple(call.calls), call.call_id, call.name, text, value, at, when, invalid)


PROFILE = profile(
    "vercel-ai",
    "Vercel AI SDK, streamText (OpenAI-compatible and Anthropic providers)",
    "library",
    "holds fragments until a name, then correlates by id, index and name; emits calls at the flush; runs only after stop or tool-calls",
    providers=("anthropic", "openai", "mistral"),
    library="ai (npm)",
    version="7.0.173",
    sources=(
        "@ai-sdk/openai-compatible dist/index.js (doStream: processToolCallDelta, flush)",
        "@ai-sdk/provider-utils dist/index.js (StreamingToolCallTracker, StreamingToolCallArgumentState)",
        "@ai-sdk/anthropic dist/index.js (content_block_stop)",
        "ai dist/index.js (streamText: finish-reason allow-list, PR #19066)",
    ),
)(StreamText)
