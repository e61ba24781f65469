"""vercel-ai: the Vercel AI SDK's ``streamText`` over its OpenAI-compatible and Anthropic providers.

Modelled from source at vercel/ai commit 03955ee6 and checked under Node against ``ai`` 7.0.173,
``@ai-sdk/openai-compatible`` 3.0.92 and ``@ai-sdk/anthropic`` 4.0.105 on npm
(``tests/clients/test_node_agreement.py``):
``packages/openai-compatible/src/chat/openai-compatible-chat-language-model.ts`` (``doStream``:
each ``tool_calls[]`` delta of ``choices[0]`` goes to the tool call tracker, whatever the choice's
``index``; the legacy ``function_call`` is not read; ``flush`` emits the calls), the tracker's
correlation after PR #18382 (a fragment joins the call with its id, else the call at its index,
else the latest call; a repeated id or name is ignored), ``packages/anthropic`` (a ``tool-call``
at ``content_block_stop`` with the buffered input, the start event's input only when it is not
empty; blocks never stopped are dropped; a ``tool_use`` start without an id fails the chunk's
schema and opens no call; a second ``message_start`` while one is open is an error and nothing
after it is read) and ``streamText`` running tools only when the step finished with ``stop`` or
``tool-calls`` (PR #19066).

- Not modelled: 7.0.173's OpenAI-compatible provider buffers a call's fragments per index until
  its name arrives, then hands them to provider-utils' ``StreamingToolCallTracker``, which gives a
  call without an id a generated one; where a new id arrives at an index already used, the two
  disagree (``KNOWN_DIVERGENCES`` in the test).

- Arguments are never taken as complete because they parse (PR #16838 moved that to the flush).
- An empty buffer is ``{}``; text that does not parse gives an ``invalid`` tool call, not run.
- A call without a name when the stream ends throws ``InvalidResponseDataError``.
- An error in the stream is an ``error`` part (not thrown) and ends the step with ``error``:
  nothing is run.
"""

from __future__ import annotations

from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import Fragment, WireMachine
from stream_doctor.clients.base import parse_json, profile
from stream_doctor.events import MISSING
from stream_doctor.records import dataclass, field


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

    def message_start(self, pos: Pos) -> None:
        if self.provider == "anthropic" and self.message_open:
            # "Received message_start for message … while message … is still open": an error part,
            # and nothing after it is read
            self.errored = self.halted = True
        self.message_open = True

    def message_stop(self, pos: Pos) -> None:
        self.message_open = False

    def fragment(self, fragment: Fragment) -> None:
        if self.halted:
            return
        if self.provider == "anthropic":  # Anthropic: blocks by index
            if fragment.first:
                if fragment.call_id is None:
                    return  # the chunk fails the provider's schema (an error part): no call is opened
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
        target = None
        if fragment.call_id is not None:
            target = next((c for c in self.calls if c.call_id == fragment.call_id), None)
        if target is None and fragment.index is not None:
            target = next(
                (
                    c
                    for c in reversed(self.calls)
                    if c.index == fragment.index and (fragment.call_id is None or c.call_id is None)
                ),
                None,
            )
        if target is None and fragment.call_id is None and fragment.index is None and self.calls:
            target = self.calls[-1]
        if target is None:
            target = _Call([], fragment.call_id, None, fragment.index, start_input=fragment.start_input)
            self.calls.append(target)
        if fragment.call is not None and fragment.call not in target.calls:
            target.calls.append(fragment.call)
        if target.name is None and fragment.name:
            target.name = fragment.name
        if target.call_id is None and fragment.call_id:
            target.call_id = fragment.call_id
        if fragment.arguments:
            target.texts.append(fragment.arguments)

    def stop(self, key: Hashable, call: int | None, pos: Pos) -> None:
        if self.halted:
            return
        held = self.by_key.get(key)
        if held is not None and held.stopped_at is None:
            held.stopped_at = pos

    def stream_error(self, pos: Pos) -> None:
        self.errored = True

    def end(self, end: Pos | None) -> None:
        runs = not self.errored and self.finish in ("tool_calls", "end")
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
            if not text and isinstance(call.start_input, dict) and call.start_input:
                value: Any = call.start_input
                text = None  # type: ignore[assignment]
            else:
                value = parse_json(text) if text else {}
            invalid = value is MISSING
            at = call.stopped_at if anthropic else None
            when = "content_block_stop (tool-call part)" if anthropic else "end of stream (flush)"
            if not runs:
                self.hand(
                    tuple(call.calls),
                    call.call_id,
                    call.name,
                    text,
                    MISSING,
                    at,
                    f"{when}; not run: the step finished with {self.finish or 'no finish reason'}",
                    True,
                )
                continue
            self.hand(tuple(call.calls), call.call_id, call.name, text, value, at, when, invalid)


PROFILE = profile(
    "vercel-ai",
    "Vercel AI SDK, streamText (OpenAI-compatible and Anthropic providers)",
    "library",
    "correlates by id, then index, then latest; emits calls at the flush; runs only after stop or tool-calls",
    providers=("anthropic", "openai"),
    library="ai (npm)",
    version="7.0.173",
    sources=(
        "packages/openai-compatible/src/chat/openai-compatible-chat-language-model.ts (doStream, flush)",
        "packages/anthropic/src/anthropic-messages-language-model.ts (content_block_stop)",
        "packages/ai/src/generate-text/stream-text.ts (finish-reason allow-list, PR #19066)",
    ),
)(StreamText)
