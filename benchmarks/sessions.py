"""Whole agent sessions as the recording proxy writes them: one envelope, every request carrying the
whole history, so the bytes grow with the square of the turns.

``session(provider, turns)`` writes, for each turn, the request (the user's question, then every
earlier call and its result, and a line of user text after each), the streamed response (a text
part and one ``write_file`` call whose arguments come in 40-character fragments) and the
``execute`` record of what the application ran. ``PROVIDERS`` are the envelope's provider names
(Anthropic Messages, OpenAI Chat Completions, OpenAI Responses). A clean session: no finding at
warning or above, unless ``broken`` names the turn whose call the application ran with ``{}`` (one
SD102 and nothing else at warning or above: what ``bench_minimize.py`` cuts down).

``personal=True`` makes it a production capture, what ``minimize --redact`` must clear: a person's
name (``USER_MARKER``) in the user's text and the call's arguments, an API key (``SECRET``) in the
first message and the request's metadata, the tool's description, and ids as the API writes them
(``toolu_01…``). ``words`` lines of text in each call's ``content``, and ``tags`` more distinct values
(many values to mask). The tests use it at 30 turns and fewer.

Benchmarks import this module as ``sessions`` (a script's folder is on ``sys.path``), the tests as
``benchmarks.sessions``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import orjson

PROVIDERS = ("anthropic", "openai", "openai-responses")
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
Json = dict[str, Any]
#: What a personal session plants: none of it may survive ``minimize --redact``.
USER_MARKER = "Alice Placeholder-Smith"
SECRET = "sk-ant-api03-PLANTEDsecretVALUE0123456789"
_DESCRIPTION = "Create or overwrite a text file in the workspace."


@dataclass(frozen=True)
class _Turn:
    """What one turn says: its number, its call's id and arguments, and the user's line after the result."""

    number: int
    call: str
    arguments: Json
    said: str

    @property
    def text(self) -> str:
        return orjson.dumps(self.arguments).decode()

    def pieces(self) -> list[str]:
        text = self.text
        return [text[at : at + 40] for at in range(0, len(text), 40)]


def _arguments(turn: int, personal: bool, words: int, tags: int) -> Json:
    asked = f" {USER_MARKER} asked for" if personal else ""
    lines = (
        [f"line {turn} of the notes{asked}"]
        if words == 1
        else [f"line {turn}.{n} of the notes{asked}" for n in range(words)]
    )
    arguments: Json = {"path": f"notes/turn-{turn}.md", "content": " ".join(lines)}
    if tags:
        arguments["tags"] = [f"tag {turn}.{n}{asked}" for n in range(tags)]
    return arguments


def _anthropic(turn: _Turn) -> tuple[list[Json], list[Json]]:
    """The turn's events, and the history items it adds (the assistant's call, the user's result)."""
    number, call = turn.number, turn.call
    message = {"id": f"msg_{number:08d}", "type": "message", "role": "assistant", "model": "claude", "content": []}
    events: list[Json] = [
        {"type": "message_start", "message": {**message, "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"Turn {number}."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": call, "name": "write_file", "input": {}}},
        *({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}} for p in turn.pieces()),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    use = {"type": "tool_use", "id": call, "name": "write_file", "input": turn.arguments}
    added = [
        {"role": "assistant", "content": [{"type": "text", "text": f"Turn {number}."}, use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "written"},
                                     {"type": "text", "text": turn.said}]},
    ]  # fmt: skip
    return events, added


def _openai(turn: _Turn) -> tuple[list[Json], list[Json]]:
    number, call = turn.number, turn.call

    def chunk(delta: Json, finish: str | None = None) -> Json:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "model": "gpt", "choices": [choice]}

    first = {"index": 0, "id": call, "type": "function", "function": {"name": "write_file", "arguments": ""}}
    events = [
        chunk({"role": "assistant", "content": f"Turn {number}."}),
        chunk({"tool_calls": [first]}),
        *(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in turn.pieces()),
        chunk({}, "tool_calls"),
    ]
    sent = {"id": call, "type": "function", "function": {"name": "write_file", "arguments": turn.text}}
    added = [
        {"role": "assistant", "content": f"Turn {number}.", "tool_calls": [sent]},
        {"role": "tool", "tool_call_id": call, "content": "written"},
        {"role": "user", "content": turn.said},
    ]
    return events, added


def _responses(turn: _Turn) -> tuple[list[Json], list[Json]]:
    number, call = turn.number, turn.call
    item = f"fc_{number:08d}"
    response = {"id": f"resp_{number:08d}", "object": "response", "status": "in_progress", "output": []}
    added_item = {"type": "function_call", "id": item, "call_id": call, "name": "write_file", "arguments": ""}
    done_item = {**added_item, "arguments": turn.text, "status": "completed"}
    events: list[Json] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": added_item},
        *({"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": item, "delta": p}
          for p in turn.pieces()),
        {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": item,
         "arguments": turn.text},
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {"type": "response.completed", "response": {**response, "status": "completed", "output": [done_item]}},
    ]  # fmt: skip
    for number, event in enumerate(events):
        event["sequence_number"] = number
    added = [
        {k: v for k, v in done_item.items() if k != "status"},
        {"type": "function_call_output", "call_id": call, "output": "written"},
        {"role": "user", "content": turn.said},
    ]
    return events, added


_TURNS: dict[str, Callable[[_Turn], tuple[list[Json], list[Json]]]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "openai-responses": _responses,
}
_REQUESTS = {
    "anthropic": ("https://api.anthropic.com/v1/messages", "messages"),
    "openai": ("https://api.openai.com/v1/chat/completions", "messages"),
    "openai-responses": ("https://api.openai.com/v1/responses", "input"),
}


#: Each provider's call id prefix, and its id as the API writes it (a personal session's) after it.
_IDS = {"anthropic": "toolu_", "openai": "call_", "openai-responses": "call_"}


def _tools(provider: str, personal: bool) -> list[Json]:
    described = {"description": _DESCRIPTION} if personal else {}
    if provider == "anthropic":
        return [{"name": "write_file", **described, "input_schema": SCHEMA}]
    if provider == "openai":
        return [{"type": "function", "function": {"name": "write_file", **described, "parameters": SCHEMA}}]
    return [{"type": "function", "name": "write_file", **described, "parameters": SCHEMA}]


def session(
    provider: str,
    turns: int,
    *,
    broken: int | Collection[int] | None = None,
    personal: bool = False,
    words: int = 1,
    tags: int = 0,
    chained: bool = False,
) -> bytes:
    """The envelope (JSON Lines bytes) of a ``turns``-turn session with ``provider``; ``broken`` (1-based):
    the turn (or turns) whose call the application ran with ``{}``; ``personal``, ``words``, ``tags``: see above.
    ``chained`` (the Responses API only): each request after the first names the previous response
    (``previous_response_id``) and sends only what the server does not hold, the call's output and the
    user's line, so the bytes grow with the turns and no turn can go without the one before it."""
    url, key = _REQUESTS[provider]
    header: Json = {"sd": "header", "version": 1, "provider": provider}
    first = "Keep notes for me, one file a turn."
    if personal:
        header["source"] = f"agent session of {USER_MARKER}"
        first = f"I am {USER_MARKER}; keep notes for me. My key is {SECRET}."
    lines: list[Json] = [header]
    history: list[Json] = [{"role": "user", "content": first}]
    said = f"Thanks. {USER_MARKER} again: next one please." if personal else "Next one, please."
    for number in range(1, turns + 1):
        body: Json = {"model": "m", "stream": True, "tools": _tools(provider, personal), key: history}
        if chained and number > 1:
            body = {**body, "previous_response_id": f"resp_{number - 1:08d}", key: history[-2:]}
        if personal:
            body["metadata"] = {"api_key": SECRET}
        lines.append({"sd": "request", "method": "POST", "url": url, "body": body})
        call = _IDS[provider] + (f"01{number:06d}AbCdEfGhIjKlMnOp" if personal else f"{number:08d}")
        turn = _Turn(number, call, _arguments(number, personal, words, tags), said)
        events, added = _TURNS[provider](turn)
        lines += [{"sd": "event", "event": event.get("type"), "data": event} for event in events]
        if provider == "openai":
            lines.append({"sd": "event", "raw": "[DONE]"})
        executed = {} if number == broken or (isinstance(broken, Collection) and number in broken) else turn.arguments
        lines.append({"sd": "execute", "call_id": call, "name": "write_file", "input": executed})
        history = history + added  # a new list: each request's history is its own, as sent
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)
