"""vercel-ai: the Vercel AI SDK's ``streamText`` over its OpenAI-compatible and Anthropic providers.

Modelled from source, not run (the SDK is TypeScript), at vercel/ai commit 03955ee6:
``packages/openai-compatible/src/chat/openai-compatible-chat-language-model.ts`` (``doStream``:
each ``tool_calls[]`` delta goes to the tool call tracker; ``flush`` emits the calls),
the tracker's correlation after PR #18382 (a fragment joins the call with its id, else the call at
its index, else the latest call; a repeated id or name is ignored), ``packages/anthropic``
(a ``tool-call`` at ``content_block_stop`` with the buffered input, the start event's input only
when it is not empty; blocks never stopped are dropped) and ``streamText`` running tools only when
the step finished with ``stop`` or ``tool-calls`` (PR #19066).

- Arguments are never taken as complete because they parse (PR #16838 moved that to the flush).
- An empty buffer is ``{}``; text that does not parse gives an ``invalid`` tool call, not run.
- A call without a name when the stream ends throws ``InvalidResponseDataError``.
- An error in the stream ends the step with ``error``: nothing is run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import Fragment, WireMachine
from stream_doctor.clients.base import parse_json, profile
from stream_doctor.events import MISSING


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


@dataclass
class StreamText(WireMachine):
    calls: list[_Call] = field(default_factory=list)
    by_key: dict[Hashable, _Call] = field(default_factory=dict)  # Anthropic: block index
    errored: bool = False

    def fragment(self, fragment: Fragment) -> None:
        if self.provider == "anthropic":  # Anthropic: blocks by index
            if fragment.first:
                call = _Call(
                    [fragment.call] if fragment.call is not None else [],
                    fragment.call_id,
                    fragment.name,
                    fragment.index,
                    start_input=fragment.start_input,
                    server_side=fragment.server_side,
                )
                self.calls.append(call)
                self.by_key[fragment.key] = call
            else:
                held = self.by_key.get(fragment.key)
                if held is not None and held.stopped_at is None and fragment.delta_type == "input_json_delta":
                    held.texts.append(fragment.arguments or "")
            return
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
            anthropic = bool(self.by_key) and call in self.by_key.values()
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
    "correlates by id, then index, then latest; emits calls at the flush; runs only after stop or tool-calls; modelled from source",
    providers=("anthropic", "openai"),
    library="ai (npm)",
    version="commit 03955ee6",
    sources=(
        "packages/openai-compatible/src/chat/openai-compatible-chat-language-model.ts (doStream, flush)",
        "packages/anthropic/src/anthropic-messages-language-model.ts (content_block_stop)",
        "packages/ai/src/generate-text/stream-text.ts (finish-reason allow-list, PR #19066)",
    ),
)(StreamText)
