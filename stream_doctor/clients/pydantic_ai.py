"""pydantic-ai: pydantic-ai's streamed model response (``ModelResponsePartsManager``), as the agent
reads the finished response and validates each tool call's arguments before running it.

Follows ``pydantic-ai-slim`` 2.68.0: ``_parts_manager.py`` ``handle_tool_call_delta`` (L374-485:
a part per ``vendor_part_id``, the latest part when there is none and no name, a new part when
there is none but a name), ``messages.py`` ``ToolCallPartDelta._apply_to_part`` (L6950-6972: the
name is *appended*, argument text appended, an id replaces the one held), the OpenAI chat
streaming (``vendor_part_id`` = the tool call ``index``) and the Anthropic streaming
(``models/anthropic/_streaming.py`` L176-182: ``vendor_part_id`` = the block index, the start
event's ``input`` used only when not empty).

Modelled from source: the test suite does not replay captures through pydantic-ai yet.

- Calls are handed when the response ends; arguments that do not parse are sent back to the model
  as a retry prompt (not run); an empty buffer is ``{}``.
- Two calls on one index are merged; a repeated name is concatenated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import Fragment, WireMachine
from stream_doctor.clients.base import parse_json, profile
from stream_doctor.events import MISSING


@dataclass
class _Part:
    calls: list[int]
    call_id: str | None
    name: str | None
    args: Any  # str, dict or None


@dataclass
class PartsManager(WireMachine):
    parts: list[_Part] = field(default_factory=list)
    by_vendor: dict[Hashable, _Part] = field(default_factory=dict)

    def fragment(self, fragment: Fragment) -> None:
        if fragment.server_side:
            return
        anthropic = isinstance(fragment.key, int)
        if anthropic and not fragment.first and fragment.delta_type != "input_json_delta":
            return
        vendor: Hashable = fragment.key if anthropic else fragment.index
        name = fragment.name or None
        args: Any = fragment.arguments
        if anthropic and fragment.first:
            args = fragment.start_input if isinstance(fragment.start_input, dict) and fragment.start_input else None
        held: _Part | None = None
        if vendor is None:
            if name is None and self.parts:
                held = self.parts[-1]
        else:
            held = self.by_vendor.get(vendor)
        if held is None:
            part = _Part([fragment.call] if fragment.call is not None else [], fragment.call_id, name, args or None)
            self.parts.append(part)
            if vendor is not None:
                self.by_vendor[vendor] = part
            return
        if fragment.call is not None and fragment.call not in held.calls:
            held.calls.append(fragment.call)
        if name:
            held.name = (held.name or "") + name
        if isinstance(args, str) and args:
            if isinstance(held.args, dict):
                self.fail(
                    fragment.pos,
                    "UnexpectedModelBehavior",
                    "Cannot apply JSON deltas to non-JSON tool arguments",
                    fragment.call,
                )
                return
            held.args = (held.args or "") + args
        if fragment.call_id:
            held.call_id = fragment.call_id

    def stream_error(self, pos: Pos) -> None:
        self.fail(pos, "ModelHTTPError", "the provider SDK raised on an error in the stream", provider_error=True)

    def end(self, end: Pos | None) -> None:
        for part in self.parts:
            if part.name is None:
                continue  # a ToolCallPartDelta never upgraded to a part: not in the response
            text = part.args if isinstance(part.args, str) else None
            value: Any = part.args if isinstance(part.args, dict) else (parse_json(text) if text else {})
            invalid = value is MISSING or not isinstance(value, dict)
            self.hand(
                tuple(part.calls),
                part.call_id,
                part.name,
                text,
                MISSING if invalid else value,
                None,
                "end of the response",
                invalid,
            )


PROFILE = profile(
    "pydantic-ai",
    "pydantic-ai (ModelResponsePartsManager; OpenAI and Anthropic models)",
    "library",
    "a part per provider index; name appended; arguments validated when the response ends",
    providers=("anthropic", "openai"),
    library="pydantic-ai-slim",
    version="2.68.0",
    sources=(
        "pydantic_ai/_parts_manager.py:374-485 (handle_tool_call_delta)",
        "pydantic_ai/messages.py:6950-6972 (ToolCallPartDelta._apply_to_part)",
        "pydantic_ai/models/anthropic/_streaming.py:176-182",
        "pydantic_ai/models/openai/_chat_streaming.py (vendor_part_id = tool call index)",
    ),
)(PartsManager)
