"""The quirk variants' plans: a Chat Completions stream rewritten the way some OpenAI-compatible servers and relays
really send it (``variants.py`` declares each, with the libraries its profile says mishandle it and where the
provider sends it). Each rewrites the chunks' JSON and keeps every other byte of the event as recorded."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from stream_doctor.serve.framing import ends_event, inserted, pieces_plan
from stream_doctor.serve.wire import Plan, Recorded

#: an event's data line (its first; Chat chunks are one line each): the field and its value
_DATA = re.compile(rb"^data: ?(.*?)(\r\n|\r|\n|$)", re.MULTILINE)


def _chunk(event: bytes) -> dict[str, Any] | None:
    """The event's chunk: its data line's JSON object, or None (``[DONE]``, a comment, not JSON)."""
    import orjson  # serving needs it; the command line's --help (the variants' sentences) does not

    match = _DATA.search(event)
    if match is None:
        return None
    try:
        value = orjson.loads(match.group(1))
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _with_chunk(event: bytes, chunk: dict[str, Any]) -> bytes:
    import orjson  # serving needs it; the command line's --help (the variants' sentences) does not

    match = _DATA.search(event)
    assert match is not None  # _chunk read a chunk from it
    return event[: match.start(1)] + orjson.dumps(chunk) + event[match.end(1) :]


def _entries(chunk: dict[str, Any]) -> Iterator[tuple[int, list[Any]]]:
    """Each choice's ``delta.tool_calls`` list, with the choice's index."""
    choices = chunk.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        calls = delta.get("tool_calls") if isinstance(delta, dict) else None
        if isinstance(calls, list):
            yield (choice.get("index", 0) if isinstance(choice.get("index", 0), int) else 0), calls


def no_calls(recorded: Recorded) -> str | None:
    """Why a Chat quirk does not apply: the stream holds no ``tool_calls`` entry to rewrite."""
    for _, data in recorded.events:
        chunk = _chunk(data)
        if chunk is not None and any(calls for _, calls in _entries(chunk)):
            return None
    return "the stream holds no tool_calls entries to rewrite"


def _rewritten(recorded: Recorded, rewrite: Callable[[dict[str, Any]], None]) -> Plan:
    pieces = []
    for _, data in recorded.events:
        chunk = _chunk(data)
        if chunk is not None:
            rewrite(chunk)
            data = _with_chunk(data, chunk)
        pieces.append(data)
    return pieces_plan(recorded, pieces)


def index_from_one(recorded: Recorded, rng: random.Random) -> Plan:
    """Every ``tool_calls[].index`` one higher: calls numbered from 1."""

    def rewrite(chunk: dict[str, Any]) -> None:
        for _, calls in _entries(chunk):
            for entry in calls:
                if isinstance(entry, dict) and isinstance(entry.get("index"), int):
                    entry["index"] += 1

    return _rewritten(recorded, rewrite)


def repeated_id_and_name(recorded: Recorded, rng: random.Random) -> Plan:
    """Every fragment of a call carries the call's ``id``, ``type`` and ``function.name``, as its first did."""
    first: dict[tuple[int, Any], dict[str, Any]] = {}

    def rewrite(chunk: dict[str, Any]) -> None:
        for choice, calls in _entries(chunk):
            for entry in calls:
                if not isinstance(entry, dict) or not isinstance(entry.get("function", {}), dict):
                    continue
                key = (choice, entry.get("index"))
                held = first.setdefault(key, {})
                for field_name in ("id", "type"):
                    if entry.get(field_name):
                        held.setdefault(field_name, entry[field_name])
                    elif field_name in held:
                        entry[field_name] = held[field_name]
                function = entry.setdefault("function", {})
                if function.get("name"):
                    held.setdefault("name", function["name"])
                elif "name" in held:
                    function["name"] = held["name"]

    return _rewritten(recorded, rewrite)


@dataclass
class _Whole:
    """One call gathered from its fragments: what it is sent whole with, and the event of its last fragment."""

    entry: dict[str, Any] = field(default_factory=dict)
    arguments: str = ""
    last: int = 0


def whole_calls_without_index(recorded: Recorded, rng: random.Random) -> Plan:
    """Each call sent whole in one entry with no ``index`` and no ``type``, in the event of its last fragment;
    the fragments are taken out of the events that carried them."""
    gathered: dict[tuple[int, Any], _Whole] = {}
    chunks = [_chunk(data) for _, data in recorded.events]
    for number, chunk in enumerate(chunks):
        for choice, calls in _entries(chunk) if chunk is not None else ():
            for entry in calls:
                if not isinstance(entry, dict):
                    continue
                whole = gathered.setdefault((choice, entry.get("index")), _Whole())
                whole.last = number
                _gather(whole, entry)
    pieces = []
    for number, ((_, data), chunk) in enumerate(zip(recorded.events, chunks, strict=True)):
        if chunk is not None and any(True for _ in _entries(chunk)):
            _place(chunk, number, gathered)
            data = _with_chunk(data, chunk)
        pieces.append(data)
    return pieces_plan(recorded, pieces)


def _gather(whole: _Whole, entry: dict[str, Any]) -> None:
    function = entry.get("function") if isinstance(entry.get("function"), dict) else {}
    assert isinstance(function, dict)
    if entry.get("id") and "id" not in whole.entry:
        whole.entry["id"] = entry["id"]
    if function.get("name") and "name" not in whole.entry:
        whole.entry["name"] = function["name"]
    if isinstance(function.get("arguments"), str):
        whole.arguments += function["arguments"]


def _place(chunk: dict[str, Any], number: int, gathered: dict[tuple[int, Any], _Whole]) -> None:
    """The chunk's fragments replaced by the whole calls whose last fragment it carried."""
    for choice in chunk["choices"]:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict) or not isinstance(delta.get("tool_calls"), list):
            continue
        index = choice.get("index", 0) if isinstance(choice.get("index", 0), int) else 0
        ending = [w for (c, _), w in gathered.items() if c == index and w.last == number]
        calls = [_whole_entry(w) for w in ending]
        if calls:
            delta["tool_calls"] = calls
        else:
            del delta["tool_calls"]


def _whole_entry(whole: _Whole) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": whole.entry["id"]} if "id" in whole.entry else {}
    entry["function"] = {"name": whole.entry.get("name"), "arguments": whole.arguments}
    return entry


#: a relay's data-only keep-alive, not JSON (deepseek-ai/deepseek-harness discussion #6593)
DATA_PING = b"data: :ping\n\n"


def data_ping(recorded: Recorded, rng: random.Random) -> Plan:
    """``data: :ping`` events between seeded whole events after the first."""
    return inserted(recorded, rng, DATA_PING, ends_event, first=1)
