"""langchain: LangChain's streamed ``AIMessageChunk`` (chunks added up, ``tool_call_chunks`` merged,
``tool_calls`` / ``invalid_tool_calls`` read from the sum), as an agent that streams a model call
runs tools from the final aggregated message.

Follows ``langchain-core`` 1.7.2: ``utils/_merge.py`` ``merge_lists`` (L98-160, entries merged when
their ``index`` matches and their ids do not disagree) and ``merge_dicts`` (L45-64: strings
concatenated, except an ``id`` equal to the one held), ``messages/ai.py`` ``init_tool_calls``
(L509-575: ``parse_partial_json(args)``, ``{}`` for empty args, anything else an invalid tool
call) and ``utils/json.py`` ``parse_partial_json`` (L58-135). The provider packages' converters:
langchain-openai 1.7.3 ``chat_models/base.py`` ``_convert_delta_to_message_chunk`` (L554-590: the
first choice of each chunk; a chunk per ``tool_calls[]`` entry with its ``index``, None when the
server sent none, and such a chunk is never merged with another) and langchain-anthropic 1.7.7
``chat_models.py`` ``_make_message_chunk_from_anthropic_event`` (a ``tool_use`` start gives name,
id and its input as JSON text when not empty; an ``input_json_delta`` gives ``args`` at the block
index when the latest block started is a client ``tool_use``; one without ``index`` gives a chunk
at index None: a nameless call of its own, while its block's call runs with what it got).

Checked against those three packages themselves (``clients/library/langchain_chat_models.py``:
``ChatOpenAI`` / ``ChatAnthropic`` ``.stream()`` on the SDK over a mock transport, chunks added up).
A ``tool_calls[]`` entry without ``function`` (Gemini's thought-signature-only entry) makes
langchain-openai raise ``AttributeError`` (the adapter marks the fragment ``without_function``;
not modelled: such an entry that opens a new call, which carries no fragment).

What follows: a repeated ``name`` is concatenated; a truncated buffer is closed and run
(``parse_partial_json`` repairs it); JSON with trailing data is an invalid tool call; ``""`` is ``{}``.
A Chat event whose data is not JSON raises the OpenAI SDK's ``JSONDecodeError`` (``sse.json()`` in
``Stream.__stream__``), which ``ChatOpenAI._stream`` lets through. Anthropic fields of the wrong type
are read as the Anthropic SDK reads them (``_anthropic_wire``: an ``index`` of ``"0"`` is 0); a
``partial_json`` that is a number fails ``AIMessageChunk``'s validation, a null one is a chunk with no args.
The message's content blocks are merged by the same rule (``messages/base.py`` ``merge_content`` ->
``merge_lists`` -> ``merge_dicts``): a tool_use start merged into an earlier one at its block index (an id
missing) with an ``input`` of another type (a list after a dict) raises ``TypeError`` there.
A ``message_delta`` with a non-empty ``context_management`` (a beta response) raises ``AttributeError``
(``.model_dump()`` on the plain dict the non-beta ``RawMessageDeltaEvent`` keeps).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._anthropic_wire import python_sdk_read
from stream_doctor.clients._wire import Fragment, WireMachine, lax_int
from stream_doctor.clients.base import profile
from stream_doctor.clients.framing import SENTINEL_READERS
from stream_doctor.values.events import MISSING, Event, Execution, Finish, Malformed, Request


@dataclass
class _Chunk:
    index: Any
    calls: list[int]
    call_id: str | None
    name: str | None
    first_args: str | None
    args_parts: list[str] = field(default_factory=list)  # later fragments, joined once (merge_dicts appends)
    #: langchain-anthropic: the ``input`` of the tool_use content block its start gave (None: none held)
    block_input: Any = None

    @property
    def args(self) -> str | None:
        if self.first_args is None and not self.args_parts:
            return None
        return (self.first_args or "") + "".join(self.args_parts)


@dataclass
class LangChainMerge(WireMachine):
    reads_event_names = ("anthropic",)  # langchain-anthropic reads through the Anthropic SDK's stream
    done_sentinel = SENTINEL_READERS["langchain"]
    chunks: list[_Chunk] = field(default_factory=list)
    by_index: dict[Any, list[_Chunk]] = field(default_factory=dict)  # the chunks of each index, in order

    latest_tool: bool = False  # langchain-anthropic: the latest block started is a client tool_use

    seen_any: bool = False
    first_chunk: Pos | None = None  # the stream's first chunk: the sum starts as it is

    def feed(self, event: Event, call: int | None) -> None:
        self.seen_any = True
        if self.first_chunk is None and type(event) not in (Request, Execution):
            self.first_chunk = event.pos
        if type(event) is Malformed and event.wire and self._anthropic:
            read = python_sdk_read(event, revalidated=True)  # an index "0" is the index 0
            if read is None:
                self._wrong_partial_json(event)
            else:
                event = read
        if type(event) is Finish and event.context_management and self._anthropic and self.error is None:
            # _make_message_chunk_from_anthropic_event (message_delta, stream_usage on by default): a truthy
            # ``context_management`` gets .model_dump(), but the non-beta RawMessageDeltaEvent has no such
            # field and keeps the beta response's object as a plain dict
            self._release()
            self.fail(event.pos, "AttributeError", "'dict' object has no attribute 'model_dump'")
            return
        super().feed(event, call)

    def _wrong_partial_json(self, event: Malformed) -> None:
        # _make_message_chunk_from_anthropic_event: after a tool_use start, create_tool_call_chunk(index=
        # event.index, args=event.delta.partial_json) in an AIMessageChunk, whose ToolCallChunk wants
        # args str | None: a number fails pydantic validation; None is a chunk with no args (a nameless
        # call {} at an index no call holds, or with no index)
        wire = dict(event.wire)
        self._release()  # the start before it is merged first (and says whether it was a tool_use)
        if "partial_json" not in wire or not self.latest_tool:
            return
        if wire["partial_json"] is not None:
            self.fail(event.pos, "ValidationError", "tool_call_chunks.0.args: Input should be a valid string")
        elif isinstance(wire.get("index"), int) or "index" not in wire:  # no index: a chunk of its own
            self._merge(_Chunk(wire.get("index"), [], None, None, None))

    def close(self, end: Pos | None) -> None:
        if not self.seen_any:
            # BaseChatModel.stream: the model produced no chunk at all (an Anthropic stream of unnamed events)
            self.fail(None, "ValueError", "No generation chunks were returned")
            return
        super().close(end)

    def block_start(self, key: Hashable, pos: Pos) -> None:
        self.latest_tool = False

    def malformed(self, reason: str, pos: Pos) -> None:
        if "UTF-8" in reason:  # the provider SDK's SSE decoder raises
            self.fail(pos, "UnicodeDecodeError", "an event's bytes are not UTF-8")
        elif not self._anthropic and reason.startswith("not JSON"):
            # the OpenAI SDK's Stream.__stream__ calls sse.json() on every event but [DONE];
            # ChatOpenAI._stream lets the JSONDecodeError through
            self.fail(pos, "JSONDecodeError", "an event's data is not JSON")

    def unindexed_fragment(self, fragment: Fragment) -> None:
        # _make_message_chunk_from_anthropic_event: an input_json_delta after a tool_use start is a
        # tool_call_chunk at ``event.index``, here None, which merge_lists never merges: a nameless call
        if self.latest_tool:
            self._merge(_Chunk(None, [], None, None, fragment.arguments))

    def fragment(self, fragment: Fragment) -> None:
        anthropic = self.provider == "anthropic"
        if anthropic:
            if fragment.first:
                self.latest_tool = not fragment.server_side
                if fragment.server_side:
                    return
                start = fragment.start_input
                call = [fragment.call] if fragment.call is not None else []
                try:
                    args = json.dumps(start) if isinstance(start, dict) and start else ""
                except RecursionError:  # as the library's json.dumps raises on input nested ~1,000 deep
                    self.fail(
                        fragment.pos,
                        "RecursionError",
                        "maximum recursion depth exceeded while encoding",
                        call[0] if call else None,
                    )
                    return
                self._merge(
                    _Chunk(fragment.key, call, fragment.call_id, fragment.name, args, block_input=start),
                    at=fragment.pos,
                )
            elif self.latest_tool and fragment.delta_type == "input_json_delta":
                call = [fragment.call] if fragment.call is not None else []
                self._merge(_Chunk(fragment.key, call, None, None, fragment.arguments))
            return
        if fragment.without_function:
            # _convert_delta_to_message_chunk reads ``rtc["function"].get("name")`` of every entry
            self.fail(fragment.pos, "AttributeError", "a tool_calls[] entry without function: 'NoneType' has no 'get'")
            return
        if fragment.server_side or fragment.block_type == "function_call":
            return  # the legacy function_call goes to additional_kwargs, not tool_call_chunks
        index: Any = fragment.index
        for field_name, value in fragment.wire:
            # _convert_delta_to_message_chunk builds a ToolCallChunk of the entry's values as sent, which
            # pydantic validates (AIMessageChunk): an index of digits is read as the integer, any other
            # value of the wrong type raises ValidationError at that chunk (None is each field's "unset")
            if field_name == "index" and lax_int(value) is not None:
                index = lax_int(value)
            elif value is not None:
                self.fail(fragment.pos, "ValidationError", f"tool_call_chunk {field_name} {value!r} is not valid")
                return
        # langchain-openai reads the first choice of each chunk; a fragment without an index gets
        # index None and is never merged with another (merge_lists merges integer indices only)
        call = [fragment.call] if fragment.call is not None else []
        # BaseChatModel.stream adds each chunk to the sum of those before it: the first chunk is the sum
        # as it is, so merge_lists never merges its own entries with each other (two on index 0 stay two)
        alone = fragment.pos == self.first_chunk
        self._merge(_Chunk(index, call, fragment.call_id, fragment.name, fragment.arguments), alone)

    def _merge(self, new: _Chunk, alone: bool = False, at: Pos | None = None) -> None:
        if new.index is None:
            self.chunks.append(new)
            return
        if alone:
            self.chunks.append(new)
            self.by_index.setdefault(new.index, []).append(new)
            return
        # merge_lists merges into the first held chunk of the same index: only those are looked at
        # (a scan of every chunk per fragment made 10,000 calls take minutes)
        same = self.by_index.setdefault(new.index, [])
        for held in same:
            if held.call_id in (None, "") or new.call_id in (None, "") or held.call_id == new.call_id:
                if new.block_input is not None and held.block_input is not None:
                    if type(new.block_input) is not type(held.block_input):
                        # the message's content blocks are merged by the same rule (merge_content ->
                        # merge_lists -> merge_dicts), and merge_dicts raises on an ``input`` of another type
                        call = new.calls[0] if new.calls else None
                        self.fail(at, "TypeError", 'additional_kwargs["input"] has a different type', call)
                        return
                elif held.block_input is None:
                    held.block_input = new.block_input
                for call in new.calls:
                    if call not in held.calls:
                        held.calls.append(call)
                held.call_id = _merge_str(held.call_id, new.call_id, keep_equal=True)
                held.name = _merge_str(held.name, new.name)
                if new.args is not None:
                    held.args_parts.append(new.args)
                return
        self.chunks.append(new)
        same.append(new)

    def stream_error(self, pos: Pos) -> None:
        exception = "APIStatusError" if self._anthropic else "APIError"
        self.fail(pos, exception, "the provider SDK raised on an error in the stream", provider_error=True)

    @property
    def _anthropic(self) -> bool:
        return self.provider == "anthropic"

    def end(self, end: Pos | None) -> None:
        # the aggregated message lists its tool_calls, then its invalid_tool_calls
        valid: list[tuple[_Chunk, Any]] = []
        invalid: list[_Chunk] = []
        for chunk in self.chunks:
            try:
                value = parse_partial_json(chunk.args) if chunk.args else {}
            except Exception:  # noqa: BLE001 - init_tool_calls catches everything the same way
                value = None
            if isinstance(value, dict):
                valid.append((chunk, value))
            else:
                invalid.append(chunk)
        for chunk, value in valid:
            self.hand(tuple(chunk.calls), chunk.call_id, chunk.name or "", chunk.args, value, None, _WHEN)
        for chunk in invalid:
            self.hand(tuple(chunk.calls), chunk.call_id, chunk.name or "", chunk.args, _NOT_RUN, None, _WHEN, True)


_WHEN = "end of stream (aggregated message)"
_NOT_RUN: Any = MISSING  # an invalid tool call is not run
_REPAIR_TRIES = 256


def _merge_str(held: str | None, new: str | None, keep_equal: bool = False) -> str | None:
    if held is None:
        return new
    if new is None:
        return held
    if keep_equal and held == new:
        return held
    return held + new


def parse_partial_json(text: str) -> Any:
    """langchain-core's ``parse_partial_json``: close open strings and brackets, then drop characters
    from the end until ``json.loads`` accepts it; None when nothing does or a bracket mismatches."""
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        pass
    chars: list[str] = []
    stack: list[str] = []
    inside = escaped = False
    for char in text:
        new = char
        if inside:
            if char == '"' and not escaped:
                inside = False
            elif char == "\n" and not escaped:
                new = "\\n"
            elif char == "\\":
                escaped = not escaped
            else:
                escaped = False
        elif char == '"':
            inside, escaped = True, False
        elif char == "{":
            stack.append("}")
        elif char == "[":
            stack.append("]")
        elif char in "}]":
            if stack and stack[-1] == char:
                stack.pop()
            else:
                return None
        chars.append(new)
    if inside:
        if escaped:
            chars.pop()
        chars.append('"')
    closing = "".join(reversed(stack))
    # Drop characters from the end until it parses. langchain-core tries every length; the profile stops
    # after _REPAIR_TRIES so a long broken buffer stays cheap (it then says invalid, as the library
    # almost always ends up saying).
    for _ in range(_REPAIR_TRIES):
        if not chars:
            break
        try:
            return json.loads("".join(chars) + closing, strict=False)
        except json.JSONDecodeError:
            chars.pop()
    return None


PROFILE = profile(
    "langchain",
    "LangChain (langchain-core chunk merging, langchain-openai / langchain-anthropic converters)",
    "library",
    "tool_call_chunks merged by index unless ids differ; name concatenated; partial JSON repaired and run",
    runs_in_python=True,
    providers=("anthropic", "openai", "mistral"),
    library="langchain-core",
    version="1.7.2",
    sources=(
        "langchain_core/utils/_merge.py:45-64, 98-160 (merge_dicts, merge_lists)",
        "langchain_core/messages/ai.py:509-575 (init_tool_calls)",
        "langchain_core/utils/json.py:58-135 (parse_partial_json)",
        "langchain-openai 1.7.3 langchain_openai/chat_models/base.py:554-590 (_convert_delta_to_message_chunk)",
        "langchain-anthropic 1.7.7 langchain_anthropic/chat_models.py:2295 (_make_message_chunk_from_anthropic_event)",
    ),
)(LangChainMerge)
