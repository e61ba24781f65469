"""langchain: LangChain's streamed ``AIMessageChunk`` (chunks added up, ``tool_call_chunks`` merged,
``tool_calls`` / ``invalid_tool_calls`` read from the sum), as an agent that streams a model call
runs tools from the final aggregated message.

Follows ``langchain-core`` 1.7.2: ``utils/_merge.py`` ``merge_lists`` (L98-160, entries merged when
their ``index`` matches and their ids do not disagree) and ``merge_dicts`` (L45-64: strings
concatenated, except an ``id`` equal to the one held), ``messages/ai.py`` ``init_tool_calls``
(L509-575: ``parse_partial_json(args)``, ``{}`` for empty args, anything else an invalid tool
call) and ``utils/json.py`` ``parse_partial_json`` (L58-135). The provider packages' converters,
modelled from source: langchain-openai ``_convert_delta_to_message_chunk`` (a chunk per
``tool_calls[]`` entry with its ``index``; a delta with an entry lacking ``index`` loses all its
tool call chunks to a caught ``KeyError``) and langchain-anthropic
``_make_message_chunk_from_anthropic_event`` (``content_block_start`` gives name, id and ``args=""``;
each ``input_json_delta`` gives ``args`` at the block index).

Modelled from source: the test suite does not replay captures through LangChain yet.

What follows: a repeated ``name`` is concatenated; a truncated buffer is closed and run
(``parse_partial_json`` repairs it); JSON with trailing data is an invalid tool call; ``""`` is ``{}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import Fragment, WireMachine
from stream_doctor.clients.base import profile
from stream_doctor.events import MISSING


@dataclass
class _Chunk:
    index: Any
    calls: list[int]
    call_id: str | None
    name: str | None
    args: str | None


@dataclass
class LangChainMerge(WireMachine):
    chunks: list[_Chunk] = field(default_factory=list)

    def fragment(self, fragment: Fragment) -> None:
        if fragment.server_side:
            return
        anthropic = isinstance(fragment.key, int)  # the Anthropic adapter keys blocks by their index
        if not anthropic and fragment.index is None:
            return  # langchain-openai: KeyError on rtc["index"], caught: the delta's tool call chunks are lost
        if anthropic and not fragment.first and fragment.delta_type != "input_json_delta":
            return
        if anthropic:
            args = "" if fragment.first else fragment.arguments
            new = _Chunk(
                fragment.key,
                [fragment.call] if fragment.call is not None else [],
                fragment.call_id,
                fragment.name,
                args,
            )
        else:
            new = _Chunk(
                fragment.index,
                [fragment.call] if fragment.call is not None else [],
                fragment.call_id,
                fragment.name,
                fragment.arguments,
            )
        self._merge(new)

    def _merge(self, new: _Chunk) -> None:
        for held in self.chunks:
            if held.index == new.index and (
                held.call_id in (None, "") or new.call_id in (None, "") or held.call_id == new.call_id
            ):
                for call in new.calls:
                    if call not in held.calls:
                        held.calls.append(call)
                held.call_id = _merge_str(held.call_id, new.call_id, keep_equal=True)
                held.name = _merge_str(held.name, new.name)
                held.args = _merge_str(held.args, new.args)
                return
        self.chunks.append(new)

    def stream_error(self, pos: Pos) -> None:
        self.fail(pos, "APIError", "the provider SDK raised on an error in the stream", provider_error=True)

    def end(self, end: Pos | None) -> None:
        for chunk in self.chunks:
            value: Any
            invalid = False
            try:
                value = parse_partial_json(chunk.args) if chunk.args else {}
            except Exception:  # noqa: BLE001 - init_tool_calls catches everything the same way
                value = None
            if not isinstance(value, dict):
                invalid, value = True, _NOT_RUN
            self.hand(
                tuple(chunk.calls),
                chunk.call_id,
                chunk.name or "",
                chunk.args,
                value,
                None,
                "end of stream (aggregated message)",
                invalid,
            )


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
    providers=("anthropic", "openai"),
    library="langchain-core",
    version="1.7.2",
    sources=(
        "langchain_core/utils/_merge.py:45-64, 98-160 (merge_dicts, merge_lists)",
        "langchain_core/messages/ai.py:509-575 (init_tool_calls)",
        "langchain_core/utils/json.py:58-135 (parse_partial_json)",
        "langchain_openai/chat_models/base.py (_convert_delta_to_message_chunk), modelled",
        "langchain_anthropic/chat_models.py (_make_message_chunk_from_anthropic_event), modelled",
    ),
)(LangChainMerge)
