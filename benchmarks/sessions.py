"""Whole agent sessions as the recording proxy writes them: one envelope, every request carrying the
whole history, so the bytes grow with the square of the turns.

``session(provider, turns)`` writes, for each turn, the request (the user's question, then every
earlier call and its result, and a line of user text after each), the streamed response (a text
part and one ``write_file`` call whose arguments come in 40-character fragments) and the
``execute`` record of what the application ran. ``PROVIDERS`` are the envelope's provider names
(Anthropic Messages, OpenAI Chat Completions, OpenAI Responses). A clean session: no finding at
warning or above. Benchmarks import this module as ``sessions`` (a script's folder is on
``sys.path``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

PROVIDERS = ("anthropic", "openai", "openai-responses")
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
Json = dict[str, Any]


def _arguments(turn: int) -> str:
    return orjson.dumps({"path": f"notes/turn-{turn}.md", "content": f"line {turn} of the notes"}).decode()


def _pieces(turn: int) -> list[str]:
    text = _arguments(turn)
    return [text[at : at + 40] for at in range(0, len(text), 40)]


def _anthropic(turn: int) -> tuple[list[Json], list[Json]]:
    """The turn's events, and the history items it adds (the assistant's call, the user's result)."""
    call = f"toolu_{turn:08d}"
    message = {"id": f"msg_{turn:08d}", "type": "message", "role": "assistant", "model": "claude", "content": []}
    events: list[Json] = [
        {"type": "message_start", "message": {**message, "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"Turn {turn}."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": call, "name": "write_file", "input": {}}},
        *({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}} for p in _pieces(turn)),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    use = {"type": "tool_use", "id": call, "name": "write_file", "input": orjson.loads(_arguments(turn))}
    added = [
        {"role": "assistant", "content": [{"type": "text", "text": f"Turn {turn}."}, use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "written"},
                                     {"type": "text", "text": "Next one, please."}]},
    ]  # fmt: skip
    return events, added


def _openai(turn: int) -> tuple[list[Json], list[Json]]:
    call = f"call_{turn:08d}"

    def chunk(delta: Json, finish: str | None = None) -> Json:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": f"chatcmpl-{turn}", "object": "chat.completion.chunk", "model": "gpt", "choices": [choice]}

    first = {"index": 0, "id": call, "type": "function", "function": {"name": "write_file", "arguments": ""}}
    events = [
        chunk({"role": "assistant", "content": f"Turn {turn}."}),
        chunk({"tool_calls": [first]}),
        *(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in _pieces(turn)),
        chunk({}, "tool_calls"),
    ]
    sent = {"id": call, "type": "function", "function": {"name": "write_file", "arguments": _arguments(turn)}}
    added = [
        {"role": "assistant", "content": f"Turn {turn}.", "tool_calls": [sent]},
        {"role": "tool", "tool_call_id": call, "content": "written"},
        {"role": "user", "content": "Next one, please."},
    ]
    return events, added


def _responses(turn: int) -> tuple[list[Json], list[Json]]:
    call, item = f"call_{turn:08d}", f"fc_{turn:08d}"
    response = {"id": f"resp_{turn:08d}", "object": "response", "status": "in_progress", "output": []}
    added_item = {"type": "function_call", "id": item, "call_id": call, "name": "write_file", "arguments": ""}
    done_item = {**added_item, "arguments": _arguments(turn), "status": "completed"}
    events: list[Json] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": added_item},
        *({"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": item, "delta": p}
          for p in _pieces(turn)),
        {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": item,
         "arguments": _arguments(turn)},
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {"type": "response.completed", "response": {**response, "status": "completed", "output": [done_item]}},
    ]  # fmt: skip
    for number, event in enumerate(events):
        event["sequence_number"] = number
    added = [
        {k: v for k, v in done_item.items() if k != "status"},
        {"type": "function_call_output", "call_id": call, "output": "written"},
        {"role": "user", "content": "Next one, please."},
    ]
    return events, added


_TURNS: dict[str, Callable[[int], tuple[list[Json], list[Json]]]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "openai-responses": _responses,
}
_REQUESTS = {
    "anthropic": ("https://api.anthropic.com/v1/messages", "messages"),
    "openai": ("https://api.openai.com/v1/chat/completions", "messages"),
    "openai-responses": ("https://api.openai.com/v1/responses", "input"),
}


def _tools(provider: str) -> list[Json]:
    if provider == "anthropic":
        return [{"name": "write_file", "input_schema": SCHEMA}]
    if provider == "openai":
        return [{"type": "function", "function": {"name": "write_file", "parameters": SCHEMA}}]
    return [{"type": "function", "name": "write_file", "parameters": SCHEMA}]


def session(provider: str, turns: int) -> bytes:
    """The envelope (JSON Lines bytes) of a ``turns``-turn session with ``provider``."""
    url, key = _REQUESTS[provider]
    lines: list[Json] = [{"sd": "header", "version": 1, "provider": provider}]
    history: list[Json] = [{"role": "user", "content": "Keep notes for me, one file a turn."}]
    for turn in range(1, turns + 1):
        body = {"model": "m", "stream": True, "tools": _tools(provider), key: history}
        lines.append({"sd": "request", "method": "POST", "url": url, "body": body})
        events, added = _TURNS[provider](turn)
        lines += [{"sd": "event", "event": event.get("type"), "data": event} for event in events]
        if provider == "openai":
            lines.append({"sd": "event", "raw": "[DONE]"})
        executed = orjson.loads(_arguments(turn))
        lines.append({"sd": "execute", "call_id": _call_id(added), "name": "write_file", "input": executed})
        history = history + added  # a new list: each request's history is its own, as sent
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _call_id(added: list[Json]) -> str:
    first = added[0]
    if "call_id" in first:
        return str(first["call_id"])
    if "tool_calls" in first:
        return str(first["tool_calls"][0]["id"])
    return str(first["content"][1]["id"])
