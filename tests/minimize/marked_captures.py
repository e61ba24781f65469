"""Captures with one marker planted in every field a capture can carry, in every framing ``--redact`` writes.

``--redact`` keeps what a finding needs and nothing else: after it, no marker may be left anywhere in
the bytes (not a prefix of it either: a marker is planted at the start of a value, so a value cut to
its first characters would still show it). The fields, by framing:

- an envelope (``envelope``): the header's free text and extra keys; the request's URL (user-info,
  query values), headers (credentials, ``x-user-email``, ``x-forwarded-for``, ``x-portkey-config``),
  extra record keys, and body (``user``, ``metadata``, ``system``, tool names, descriptions and
  schema defaults, history text, earlier calls' arguments, tool results); every event's text, ids,
  call names and argument fragments (the marker split across two fragments), extra keys, a ``raw``
  event text; the executed input and the record's extra keys; the response's headers. An OpenAI
  Chat turn adds ``role: tool`` and ``role: function`` results and its ``arguments`` strings.
- SSE (``sse``): a comment before the first event and inside one, ``id:`` lines, an event whose JSON
  spans several ``data:`` lines, text and a cut call's partial arguments (SD301).
- the Responses API (``responses_sse``): the ``response.created`` echo (``instructions``, ``user``,
  ``metadata``, ``prompt_cache_key``, ``safety_identifier``), output text and a call's arguments.
- the Anthropic SDK helper's log (``helper_log``): each fragment twice (the raw delta and the
  helper's ``input_json`` copy with its snapshot), cut inside the call (SD301).
"""

from __future__ import annotations

from typing import Any

import orjson

MARKER = "SECRETMARKER"
_M = MARKER


def _lines(records: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


def _anthropic_events(turn: int, arguments: str, *, name: str) -> list[dict[str, Any]]:
    cut = arguments.index(_M) + 6  # the marker split between two fragments
    pieces = [arguments[:cut], arguments[cut:]]
    return [
        {"type": "message_start", "message": {"id": f"msg_{_M}{turn}", "type": "message", "role": "assistant",
                                              "model": "claude-sonnet-4-5", "content": [], "stop_reason": None,
                                              "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"{_M} says hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": f"toolu_{_M}{turn}", "name": name, "input": {}}},
        *({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": piece}}
          for piece in pieces),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip


def envelope() -> bytes:
    """Two Anthropic turns and an OpenAI-shaped history: the second turn's call was run with ``{}`` (SD102)."""
    tool = f"save_{_M}"
    tools = [{"name": tool, "description": f"{_M} tool", "input_schema": {
        "type": "object", "required": ["path"],
        "properties": {"path": {"type": "string", "description": f"{_M} path", "default": f"{_M}.md"}}}}]  # fmt: skip
    records: list[dict[str, Any]] = [
        {"sd": "header", "version": 1, "provider": "anthropic", "source": _M, "note": _M, "owner": _M},
    ]
    history: list[dict[str, Any]] = [{"role": "user", "content": f"{_M} asks"}]
    for turn in (1, 2):
        arguments = orjson.dumps({"path": f"{_M}-{turn}.md", "mode": f"{_M} mode"}).decode()
        body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True, "system": f"{_M} system",
                "metadata": {"user_id": _M}, "user": _M, "tools": tools, "messages": list(history)}  # fmt: skip
        records.append({
            "sd": "request", "t": 0, "method": "POST", "label": _M, "body": body,
            "url": f"https://someone:{_M}@api.anthropic.com/v1/messages?trace={_M}&beta=true",
            "headers": {"x-user-email": f"{_M}@example.com", "x-forwarded-for": _M, "x-portkey-config": _M,
                        "authorization": f"Bearer {_M}", "content-type": "application/json"},
            "response": {"status": 200, "headers": {"x-request-id": _M, "content-type": "text/event-stream"}},
        })  # fmt: skip
        events = _anthropic_events(turn, arguments, name=tool)
        records += [{"sd": "event", "event": event["type"], "data": event, "trace": _M} for event in events]
        records.append({"sd": "event", "event": "ping", "raw": f"{_M} is not JSON"})
        executed = {} if turn == 2 else orjson.loads(arguments)
        records.append({"sd": "execute", "call_id": f"toolu_{_M}{turn}", "name": tool, "input": executed, "by": _M})
        history += [
            {"role": "assistant", "content": [
                {"type": "text", "text": f"{_M} says hi"},
                {"type": "tool_use", "id": f"toolu_{_M}{turn}", "name": tool, "input": orjson.loads(arguments)}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{_M}{turn}", "content": f"{_M} saved"},
                {"type": "text", "text": f"{_M} thanks"}]},
        ]  # fmt: skip
    return _lines(records)


def openai_envelope() -> bytes:
    """An OpenAI Chat turn whose history holds ``role: tool`` and ``role: function`` results; its call was run
    with ``{}`` (SD102)."""
    arguments = orjson.dumps({"city": f"{_M} city"}).decode()
    body = {"model": "gpt-4o", "stream": True, "user": _M, "tools": [{"type": "function", "function": {
        "name": "lookup", "description": f"{_M} looks up", "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "default": _M}}}}}],
        "messages": [
            {"role": "system", "content": f"{_M} system"}, {"role": "user", "content": f"{_M} asks"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{_M}0", "type": "function",
             "function": {"name": "lookup", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": f"call_{_M}0", "content": f"{_M} result"},
            {"role": "function", "name": "lookup", "content": f"{_M} legacy result"}]}  # fmt: skip
    chunk = {"id": f"chatcmpl-{_M}", "object": "chat.completion.chunk", "model": "gpt-4o", "system_fingerprint": _M}
    deltas = [
        {"role": "assistant", "content": f"{_M} text"},
        {"tool_calls": [{"index": 0, "id": f"call_{_M}1", "type": "function",
                         "function": {"name": "lookup", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": arguments[:14]}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": arguments[14:]}}]},
    ]  # fmt: skip
    records: list[dict[str, Any]] = [
        {"sd": "header", "version": 1, "provider": "openai", "note": _M},
        {"sd": "request", "url": f"https://api.openai.com/v1/chat/completions?key={_M}", "body": body},
    ]
    records += [
        {"sd": "event", "data": {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}}
        for delta in deltas
    ]
    records += [
        {"sd": "event", "data": {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}},
        {"sd": "event", "raw": "[DONE]"},
        {"sd": "execute", "call_id": f"call_{_M}1", "name": "lookup", "input": {}},
    ]
    return _lines(records)


def sse() -> bytes:
    """Anthropic SSE with comments, ``id:`` lines and a multi-line ``data:``, cut inside a call (SD301)."""
    arguments = orjson.dumps({"path": f"{_M}.md", "content": f"{_M} body"}).decode()
    events = _anthropic_events(1, arguments, name=f"save_{_M}")[:6]  # ends in the call's second fragment
    out = [f": {_M} before the first event\n\n"]
    for number, event in enumerate(events):
        data = orjson.dumps(event).decode()
        if number == 0:  # one JSON text over three data lines
            data = data.replace(',"type"', ',\n"type"', 1).replace(',"role"', ',\n"role"', 1)
        out.append(f"event: {event['type']}\nid: {_M}-{number}\n: {_M} comment\n")
        out.append("".join(f"data: {line}\n" for line in data.split("\n")) + "\n")
    return "".join(out).encode()


def framed_sse(framing: list[tuple[bool, bool, frozenset[int]]], ending: str = "\n") -> bytes:
    """``sse``'s events framed as ``framing`` says, one entry per event (the rest framed plainly): with an
    ``id:`` line or not, a comment or not, and its JSON written indented and cut into ``data:`` lines
    after the indented lines whose numbers are given (the SSE decoder joins them with newlines, which
    JSON reads as spaces)."""
    arguments = orjson.dumps({"path": f"{_M}.md", "content": f"{_M} body"}).decode()
    events = _anthropic_events(1, arguments, name=f"save_{_M}")[:6]
    out = []
    for number, event in enumerate(events):
        with_id, with_comment, cuts = framing[number] if number < len(framing) else (False, False, frozenset())
        lines = orjson.dumps(event, option=orjson.OPT_INDENT_2).decode().split("\n")
        data, current = [], ""
        for at, line in enumerate(lines):
            current += line
            if at in cuts or at == len(lines) - 1:
                data.append(current)
                current = ""
        out.append(f"event: {event['type']}{ending}")
        out.append(f"id: {_M}-{number}{ending}" if with_id else "")
        out.append(f": {_M} comment{ending}" if with_comment else "")
        out.append("".join(f"data: {piece}{ending}" for piece in data) + ending)
    return "".join(out).encode()


def responses_sse() -> bytes:
    """An OpenAI Responses stream whose ``response.created`` echoes the request, cut inside a call (SD301)."""
    echo = {"id": f"resp_{_M}", "object": "response", "status": "in_progress", "model": "gpt-5",
            "instructions": f"{_M} instructions", "user": _M, "metadata": {"who": _M},
            "prompt_cache_key": _M, "safety_identifier": _M, "output": []}  # fmt: skip
    item = {"id": f"fc_{_M}", "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": f"call_{_M}", "name": "lookup"}  # fmt: skip
    arguments = orjson.dumps({"city": f"{_M} city"}).decode()
    events = [
        {"type": "response.created", "sequence_number": 0, "response": echo},
        {"type": "response.output_text.delta", "sequence_number": 1, "item_id": f"msg_{_M}", "output_index": 0,
         "content_index": 0, "delta": f"{_M} text"},
        {"type": "response.output_item.added", "sequence_number": 2, "output_index": 1, "item": item},
        {"type": "response.function_call_arguments.delta", "sequence_number": 3, "item_id": f"fc_{_M}",
         "output_index": 1, "delta": arguments[:14]},
    ]  # fmt: skip
    return "".join(f"event: {e['type']}\ndata: {orjson.dumps(e).decode()}\n\n" for e in events).encode()


def helper_log() -> bytes:
    """The Anthropic SDK helper's event log (each fragment also as an ``input_json`` event with the parsed
    snapshot so far), cut inside the call (SD301)."""
    arguments = orjson.dumps({"location": f"{_M} town", "unit": f"{_M} unit"}).decode()
    events = _anthropic_events(1, arguments, name="get_weather")[:7]
    out: list[dict[str, Any]] = []
    joined = ""
    for event in events:
        out.append(event)
        piece = event.get("delta", {}).get("partial_json")
        if piece is not None:
            joined += piece
            out.append({"type": "input_json", "partial_json": piece, "snapshot": {"location": f"{_M} town"}})
    return _lines(out)


#: Each generator's captures and the code it keeps.
CASES = {
    "envelope": (envelope, "SD102"),
    "openai-envelope": (openai_envelope, "SD102"),
    "sse": (sse, "SD301"),
    "responses-sse": (responses_sse, "SD301"),
    "helper-log": (helper_log, "SD301"),
}
