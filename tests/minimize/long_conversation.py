"""A long agent conversation as the recording proxy or an application's Recorder would write it.

An Anthropic envelope of ``turns`` turns: each request carries the whole history so far (the user's
question, every earlier tool_use and tool_result, with user text and a planted secret), each
response a text block and one ``write_file`` call streamed in fragments, and each turn the
``execute`` record of what the application ran. In turn ``broken`` (1-based) the application ran
the call with the ``{}`` placeholder of content_block_start: one SD102 and nothing else at warning
or above. The size grows with the square of the turns (the history), as production captures do.
``benchmarks/bench_minimize.py`` uses it at 300 turns (about 20 MB); the tests at 30.
"""

from __future__ import annotations

from typing import Any

import orjson

TOOLS = [
    {
        "name": "write_file",
        "description": "Create or overwrite a text file in the workspace.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    }
]
#: What the redaction test looks for: none of it may survive ``--redact``.
USER_MARKER = "Alice Placeholder-Smith"
SECRET = "sk-ant-api03-PLANTEDsecretVALUE0123456789"


def _call_id(turn: int) -> str:
    return f"toolu_01{turn:06d}AbCdEfGhIjKlMnOp"


def _arguments(turn: int, words: int, tags: int = 0) -> dict[str, Any]:
    content = " ".join(f"line {turn}.{n} of the notes {USER_MARKER} asked for" for n in range(words))
    arguments: dict[str, Any] = {"path": f"notes/turn-{turn}.md", "content": content}
    if tags:
        arguments["tags"] = [f"tag {turn}.{n} of {USER_MARKER}" for n in range(tags)]
    return arguments


def _events(turn: int, words: int, tags: int) -> list[dict[str, Any]]:
    arguments = orjson.dumps(_arguments(turn, words, tags)).decode()
    pieces = [arguments[at : at + 40] for at in range(0, len(arguments), 40)]
    message = {
        "id": f"msg_01{turn:06d}QHB6N3FFyC8LQKqLBw",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1000 + turn, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"Writing turn {turn}."}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": _call_id(turn), "name": "write_file", "input": {}},
        },
    ]
    events += [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": piece}}
        for piece in pieces
    ]
    events += [
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 90},
        },
        {"type": "message_stop"},
    ]
    return events


def conversation(turns: int, broken: int, words: int = 8, tags: int = 0) -> bytes:
    """The envelope (JSON Lines bytes). ``tags``: each call's arguments also hold a list of that many
    distinct strings (many values for ``--redact`` to mask)."""
    lines = [
        {"sd": "header", "version": 1, "provider": "anthropic", "source": f"agent session of {USER_MARKER}"},
    ]
    history: list[dict[str, Any]] = [
        {"role": "user", "content": f"I am {USER_MARKER}; keep notes for me. My key is {SECRET}."},
    ]
    for turn in range(1, turns + 1):
        body = {
            "model": "claude-sonnet-4-5-20250929",
            "max_tokens": 4096,
            "stream": True,
            "metadata": {"api_key": SECRET},
            "tools": TOOLS,
            "messages": list(history),
        }
        lines.append(
            {"sd": "request", "t": 0, "method": "POST", "url": "https://api.anthropic.com/v1/messages", "body": body}
        )
        lines += [{"sd": "event", "event": event["type"], "data": event} for event in _events(turn, words, tags)]
        executed = {} if turn == broken else _arguments(turn, words, tags)
        lines.append({"sd": "execute", "call_id": _call_id(turn), "name": "write_file", "input": executed})
        history += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Writing turn {turn}."},
                    {
                        "type": "tool_use",
                        "id": _call_id(turn),
                        "name": "write_file",
                        "input": _arguments(turn, words, tags),
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": _call_id(turn), "content": "written"},
                    {"type": "text", "text": f"Thanks. {USER_MARKER} again: next one please."},
                ],
            },
        ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)
