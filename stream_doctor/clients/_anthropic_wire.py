"""How the Anthropic SDKs read a frame the adapter found of the wrong type (``Malformed.wire``).

The adapter reads an ``index`` that is not an integer as missing; the SDKs do not. The Python SDK
validates each event with pydantic in lax mode (``_models.construct_type`` tries ``validate_type``
on the event union first), which takes ``"0"`` as the integer 0, unless another field of the event
fails too (then the event is built unvalidated and the string stays). JavaScript indexes the content
list with the string itself: ``content.at("0")`` and ``content["0"]`` are the block 0.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from stream_doctor.providers.anthropic import start_event
from stream_doctor.values.events import ArgsDelta, BlockDelta, BlockStop, Event, Malformed

#: a string pydantic's lax int accepts (surrounding whitespace, a sign, ``_`` between digits, ``.0``)
_LAX_INT = re.compile(r"\s*[+-]?[0-9]+(?:_[0-9]+)*(?:\.0*)?\s*", re.ASCII)


def pydantic_index(value: Any) -> int | None:
    """The index pydantic's lax validation reads from ``value``, or None when it fails."""
    if isinstance(value, str) and _LAX_INT.fullmatch(value):
        return int(value.strip().split(".")[0].replace("_", ""))
    return None


def javascript_index(value: Any) -> int | None:
    """The list position a JavaScript property key ``value`` names (``"0"``, not ``"00"``), or None."""
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value, re.ASCII) and str(int(value)) == value:
        return int(value)
    return None


def wire_of(event: Malformed) -> dict[str, Any]:
    return dict(event.wire)


def read_as(event: Malformed, index_of: Callable[[Any], Any], fragment: str | None = None) -> Event | None:
    """The event the adapter makes of ``event``'s frame had its index been the one ``index_of`` reads
    from the string sent (None: it reads none, or the frame is no content block event). ``fragment``:
    the argument text of a delta whose ``partial_json`` was no string, as the library reads it."""
    wire = wire_of(event)
    if "index" not in wire:
        return None
    index = index_of(wire["index"])
    if index is None:
        return None
    if event.reason.startswith("content_block_start"):
        block = wire.get("content_block")
        return start_event(event.pos, index, block) if block is not None else None
    if event.reason.startswith("content_block_stop"):
        return BlockStop(event.pos, index)
    text = event.fragment if event.fragment is not None else fragment
    if event.reason.startswith(("content_block_delta", "input_json_delta")) and text is not None:
        return ArgsDelta(event.pos, index, text, "input_json_delta")
    if isinstance(wire.get("delta_type"), str):  # a text or thinking delta (its size is not kept)
        return BlockDelta(event.pos, index, wire["delta_type"], 0)
    return None


def python_sdk_read(event: Malformed, revalidated: bool = False) -> Event | None:
    """The event the Python SDK reads from a frame whose ``index`` is a string pydantic's lax int
    accepts (``construct_type`` validates the event first), when no other field of it is of the wrong
    type (anthropic-python, and langchain-anthropic and pydantic-ai, which stream through it).
    ``revalidated``: the application validates the index again in lax mode (langchain-core's
    ``AIMessageChunk`` does its ``ToolCallChunk.index``), so a start that failed the SDK's validation
    still has the integer."""
    if any(name not in ("index", "content_block", "delta_type") for name, _ in event.wire):
        return None  # the event fails validation, is built as it is, and the string stays the index
    block = wire_of(event).get("content_block")
    if isinstance(block, dict) and not revalidated and not _validates(block):
        # built unvalidated: the block is appended all the same (accumulate_event), but the index the
        # application reads is the string as sent (pydantic-ai's vendor part id, langchain's chunk index)
        return read_as(event, lambda index: index)
    return read_as(event, pydantic_index)


def _validates(block: dict[str, Any]) -> bool:
    """Whether the SDK's ``RawContentBlockStartEvent`` validates with this block: a tool call's needs a
    string id and name and an object input (``ToolUseBlock``), a text block a string text."""
    if block.get("type") in ("tool_use", "server_tool_use"):
        fields = (block.get("id"), block.get("name"))
        return all(isinstance(f, str) for f in fields) and isinstance(block.get("input"), dict)
    return block.get("type") == "text" and isinstance(block.get("text"), str)


def javascript_string(value: Any) -> str:
    """``'' + value`` in JavaScript, for what ``JSON.parse`` gives (the TypeScript SDK appends a
    ``partial_json`` of any type to its text buffer this way)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e21):
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return ",".join("" if item is None else javascript_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)
