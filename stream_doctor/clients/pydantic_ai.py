"""pydantic-ai: pydantic-ai's streamed model response (``ModelResponsePartsManager``), as the agent
reads the finished response and validates each tool call's arguments before running it.

Follows ``pydantic-ai-slim`` 2.68.0: ``_parts_manager.py`` ``handle_tool_call_delta`` (L374-485:
a part per ``vendor_part_id``, the latest part when there is none and no name, a new part when
there is none but a name), ``messages.py`` ``ToolCallPartDelta._apply_to_part`` (L6950-6972: the
name is *appended*, argument text appended, an id replaces the one held), the OpenAI chat
streaming (``vendor_part_id`` = the tool call ``index``) and the Anthropic streaming
(``models/anthropic/_streaming.py`` L176-182: ``vendor_part_id`` = the block index, the start
event's ``input`` used only when not empty; an ``input_json_delta`` without ``index`` has vendor
part id None, so its text goes to the latest tool call part, L285-308).

Checked against pydantic-ai-slim 2.68.0 itself (``clients/library/pydantic_ai_models.py``: its
OpenAI and Anthropic model classes on the official SDKs, over a mock transport). Also followed:
the vendor part id is the tool call index whatever the choice (two choices' calls merge); a Chat
event whose data is not JSON raises ``ModelAPIError`` (the SDK's ``JSONDecodeError``, mapped by
``models/_decode_errors.py`` ``MapStreamDecodeErrors``); the
Anthropic model asserts that the first event is ``message_start``; a text delta at a tool call's
block index raises ``UnexpectedModelBehavior``; an in-stream error raises the exception its
``error.type`` maps to (``ModelOverloadedError`` …); the legacy ``function_call`` is not read.

- Calls are handed when the response ends; arguments that do not parse are sent back to the model
  as a retry prompt (not run); an empty buffer is ``{}``.
- Two calls on one index are merged; a repeated name is concatenated. A second start event's
  non-empty ``input`` on a reused Anthropic block index is merged into the part's dict arguments,
  and raises ``UnexpectedModelBehavior`` when any ``input_json_delta`` (an empty one too) made them
  text (``_parts_manager.py`` ``_apply_tool_call_delta``, ``ToolCallPartDelta._apply_to_part``).
- A Chat tool call ``index`` that is a list or an object (the OpenAI SDK builds its chunk without
  validation, so it arrives as sent) raises ``TypeError: unhashable type`` where ``handle_tool_call_delta``
  looks the vendor part id up in its dict (checked against pydantic-ai-slim 2.68.0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._anthropic_wire import python_sdk_read
from stream_doctor.clients._wire import Fragment, WireMachine, lax_int
from stream_doctor.clients.base import parse_json, profile
from stream_doctor.clients.framing import SENTINEL_READERS
from stream_doctor.values.events import (
    MISSING,
    Event,
    Execution,
    KeepAlive,
    Malformed,
    MessageStart,
    MessageStop,
    Request,
    ToolStart,
)


@dataclass
class _Part:
    calls: list[int]
    call_id: Any  # str or None; a number as the Chat stream sent it
    name: str | None
    first_args: Any  # str, dict or None
    text_parts: list[str] = field(default_factory=list)  # argument text appended later, joined once

    @property
    def args(self) -> Any:
        if not self.text_parts:
            return self.first_args
        return (self.first_args or "") + "".join(self.text_parts)


#: the Anthropic deltas that make (or extend) a part that is not a tool call, and its kind
_PART_OF_DELTA = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "thinking"}


@dataclass
class PartsManager(WireMachine):
    parts: list[_Part] = field(default_factory=list)
    by_vendor: dict[Hashable, _Part] = field(default_factory=dict)
    #: Anthropic: the block indices (vendor part ids) that hold a text or thinking part
    other_parts: dict[Hashable, str] = field(default_factory=dict)

    started: bool = False
    seen_any: bool = False
    reads_event_names = ("anthropic",)  # AnthropicModel streams through the Anthropic SDK
    done_sentinel = SENTINEL_READERS["pydantic-ai"]

    def close(self, end: Pos | None) -> None:
        if not self.seen_any:
            # both models peek the first event or chunk (the OpenAI chat model's _process_streamed_response,
            # AnthropicStreamedResponse): with none, no response to build
            self.fail(None, "UnexpectedModelBehavior", "Streamed response ended without content or tool calls")
            return
        super().close(end)

    def feed(self, event: Event, call: int | None) -> None:
        # a Chat chunk with no choices (usage, Azure's prompt_filter_results) is a chunk the OpenAI model's peek
        # reads (_chat_model.py _process_streamed_response); an Anthropic ping is no message_start
        ignored = (Request, Execution, KeepAlive) if self.provider == "anthropic" else (Request, Execution)
        if not self.seen_any and type(event) not in ignored and not self._done(event):
            self.seen_any = True
            if self.provider == "anthropic" and type(event) is not MessageStart:
                # AnthropicStreamedResponse reads the first event as the message_start and asserts it
                self.fail(event.pos, "AssertionError", "the first event is not message_start")
                return
        if type(event) is Malformed and "UTF-8" in event.reason:
            self.fail(event.pos, "ModelAPIError", "an event's bytes are not UTF-8 (UnicodeDecodeError)")
            return
        if type(event) is Malformed and self.provider != "anthropic" and event.reason.startswith("not JSON"):
            # the OpenAI SDK's sse.json() raises JSONDecodeError; MapStreamDecodeErrors
            # (models/_decode_errors.py) makes it ModelAPIError
            self.fail(event.pos, "ModelAPIError", "an event's data is not JSON (JSONDecodeError)")
            return
        if type(event) is ToolStart and event.block_type == "function_call":
            return  # the legacy function_call is not read
        if type(event) is Malformed and event.wire and self.provider == "anthropic":
            event = python_sdk_read(event) or event  # AnthropicModel reads through the SDK: "0" is the index 0
        self.read_done = self._done(event)
        super().feed(event, call)

    def _done(self, event: Event) -> bool:
        """Chat Completions' ``data: [DONE]``: the SDK stops reading, it is no chunk."""
        return type(event) is MessageStop and self.provider != "anthropic"

    def block_delta(self, key: Hashable, delta_type: str, pos: Pos) -> None:
        if self.provider != "anthropic" or delta_type not in _PART_OF_DELTA:
            return
        # _parts_manager.handle_text_delta / handle_thinking_delta on a vendor part id that holds a part of
        # another kind (a tool call, a thinking part for a text delta, a text part for a thinking one)
        kind = _PART_OF_DELTA[delta_type]
        held = "tool call" if key in self.by_vendor else self.other_parts.get(key, kind)
        if held != kind:
            self.fail(pos, "UnexpectedModelBehavior", f"Cannot apply a {kind} delta to a {held} part")
        self.other_parts[key] = kind

    def fragment(self, fragment: Fragment) -> None:
        if fragment.server_side:
            return
        anthropic = self.provider == "anthropic"
        if anthropic and not fragment.first and fragment.delta_type != "input_json_delta":
            return
        vendor, args, call_id = self._as_handed(fragment)
        if isinstance(vendor, (list, dict)):
            # ModelResponsePartsManager.handle_tool_call_delta looks the vendor part id up in a dict
            self.fail(fragment.pos, "TypeError", f"unhashable type: {type(vendor).__name__!r}", fragment.call)
            return
        if anthropic and fragment.first and vendor in self.other_parts:
            # handle_tool_call_delta on a vendor part id that holds a text or thinking part (_parts_manager.py L431-433)
            self.fail(
                fragment.pos, "UnexpectedModelBehavior", "Cannot apply a tool call delta to a text or thinking part"
            )
            return
        name = fragment.name or None
        held: _Part | None = None
        if vendor is None:
            if name is None and self.parts:
                held = self.parts[-1]
        else:
            held = self.by_vendor.get(vendor)
        if held is None:
            # kept as given: an empty argument text makes the part's args "" (a string), which a later
            # start event's dict input cannot merge into
            part = _Part([fragment.call] if fragment.call is not None else [], call_id, name, args)
            if name is not None:
                self._part_started(len(self.parts), fragment.pos)
            self.parts.append(part)
            if vendor is not None:
                self.by_vendor[vendor] = part
            return
        self._apply(held, fragment, name, args, call_id)

    def _as_handed(self, fragment: Fragment) -> tuple[Any, Any, Any]:
        """The fragment's vendor part id, arguments and call id as the model class hands them to the parts manager."""
        anthropic = self.provider == "anthropic"
        vendor: Any = fragment.key if anthropic else fragment.index
        args: Any = fragment.arguments
        call_id: Any = fragment.call_id
        for field_name, value in fragment.wire:
            # _map_tool_call_delta hands the OpenAI SDK's chunk values on as they are (an index of digits is
            # the integer there): a string index is its own vendor part id, a numeric id the part's id, an
            # object as the arguments the part's dict args (ToolCallPartDelta takes str | dict)
            if field_name == "index":
                vendor = value if lax_int(value) is None else lax_int(value)
            elif field_name == "id":
                call_id = value
            elif field_name == "arguments" and isinstance(value, dict):
                args = value
        if anthropic and fragment.first:
            args = fragment.start_input if isinstance(fragment.start_input, dict) and fragment.start_input else None
        return vendor, args, call_id

    def _apply(self, held: _Part, fragment: Fragment, name: str | None, args: Any, call_id: Any) -> None:
        """``ToolCallPartDelta._apply_to_part``: the fragment on the part its vendor part id holds."""
        if fragment.call is not None and fragment.call not in held.calls:
            held.calls.append(fragment.call)
        if name:
            if held.name is None:  # a ToolCallPartDelta upgraded to a part: its PartStartEvent
                self._part_started(self.parts.index(held), fragment.pos)
            held.name = (held.name or "") + name
        if isinstance(args, dict):
            # a start event's non-empty input on a block index a part already holds (a reused index):
            # ToolCallPartDelta._apply_to_part merges it into dict args (or None) and raises on string
            # args, which any input_json_delta before it made them, an empty one too
            if isinstance(held.args, str):
                self.fail(
                    fragment.pos,
                    "UnexpectedModelBehavior",
                    "Cannot apply dict deltas to non-dict tool arguments",
                    fragment.call,
                )
                return
            held.first_args = {**(held.first_args or {}), **args}
        elif isinstance(args, str):
            # ToolCallPartDelta._apply_to_part: any text delta, an empty one too, on a part whose
            # args are a dict (the Anthropic start event's non-empty input) raises
            if isinstance(held.first_args, dict):
                self.fail(
                    fragment.pos,
                    "UnexpectedModelBehavior",
                    "Cannot apply JSON deltas to non-JSON tool arguments",
                    fragment.call,
                )
                return
            if args:
                held.text_parts.append(args)
            elif held.first_args is None:
                held.first_args = ""  # (part.args or '') + '': the args are now a string
        if call_id:
            held.call_id = call_id

    last_start: int | None = None  # the position in ``parts`` of the latest PartStartEvent
    named_parts: int = 0  # the parts with a name (ToolCallParts; the others are still deltas)

    def _part_started(self, position: int, pos: Pos | None) -> None:
        """A PartStartEvent: ``iterator_with_part_end`` (models/__init__.py) first ends the previous one."""
        self.named_parts += 1  # the new part is in get_parts() when the previous one is ended
        self._part_ended(pos)
        self.last_start = position

    def _part_ended(self, pos: Pos | None) -> None:
        """``part_end_event`` reads ``get_parts()[start.index]``: the index counts the nameless
        ToolCallPartDeltas that ``get_parts`` leaves out, so with one before it, it is past the end."""
        if self.last_start is not None and self.last_start >= self.named_parts:
            self.fail(pos, "IndexError", "list index out of range (a nameless tool call delta before the part)")

    def unindexed_fragment(self, fragment: Fragment) -> None:
        # _map_content_block_delta passes ``vendor_part_id=event.index``, here None: handle_tool_call_delta
        # appends the text to the latest part when it is a tool call (L418-425)
        if self.provider == "anthropic":
            self.fragment(fragment)

    def stream_error(self, pos: Pos) -> None:
        # the SDK raises at the error event (anthropic Stream.__stream__: sse.event == "error"; openai's on
        # data.get("error")) and reads nothing after it; pydantic-ai maps the error's type to its class
        category = _ERROR_CATEGORIES.get(self.error_type or "", "ModelAPIError")
        self.fail(
            pos, category, f"the provider sent {self.error_type or 'an error'} in the stream", provider_error=True
        )

    def finished(self, pos: Pos) -> None:
        pass

    #: the latest event was a ``[DONE]`` the SDK read (Chat): its reading stops there, so what pydantic-ai
    #: raises at the stream's end it raises at that frame; otherwise only once the body has ended (no frame):
    #: the Anthropic SDK's ``Stream.__stream__`` reads to the body's end, message_stop or not
    read_done: bool = False

    def end(self, end: Pos | None) -> None:
        self._part_ended(end if self.read_done else None)
        if self.error is not None:
            return
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


#: pydantic-ai's exception for the ``error.type`` a stream carries (models/anthropic/_errors.py:165-169,
#: and the OpenAI model's mapping of a server error)
_ERROR_CATEGORIES = {
    "rate_limit_error": "ModelRateLimitError",
    "billing_error": "ModelQuotaExceededError",
    "overloaded_error": "ModelOverloadedError",
    "server_error": "ModelServerError",
    "api_error": "ModelServerError",
}


PROFILE = profile(
    "pydantic-ai",
    "pydantic-ai (ModelResponsePartsManager; OpenAI and Anthropic models)",
    "library",
    "a part per provider index; name appended; arguments validated when the response ends",
    runs_in_python=True,
    providers=("anthropic", "openai", "mistral"),
    library="pydantic-ai-slim",
    version="2.68.0",
    sources=(
        "pydantic_ai/_parts_manager.py:374-485 (handle_tool_call_delta)",
        "pydantic_ai/messages.py:6950-6972 (ToolCallPartDelta._apply_to_part)",
        "pydantic_ai/models/anthropic/_streaming.py:176-182",
        "pydantic_ai/models/openai/_chat_streaming.py (vendor_part_id = tool call index)",
    ),
)(PartsManager)
