"""Synthetic captures the benchmarks write at full size and the tests write small, one definition each.

Benchmarks import this module as ``captures`` (a script's own folder is on ``sys.path``), the tests
as ``benchmarks.captures`` (the repository root is, through pytest's ``pythonpath``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path


def write_calls(path: Path, calls: int) -> None:
    """``calls`` tool calls in one message, each ~2 KB of arguments in 8 deltas; every 10th call's
    arguments do not parse (SD201), so findings grow with calls too."""

    def event(name: str, data: dict) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()

    with path.open("wb") as out:
        out.write(
            event(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_scale",
                        "type": "message",
                        "role": "assistant",
                        "content": [],
                        "model": "claude",
                        "stop_reason": None,
                        "usage": {"input_tokens": 1, "output_tokens": 1},
                    },
                },
            )
        )
        piece = "x" * 130
        for index in range(calls):
            out.write(
                event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": f"toolu_{index:08d}",
                            "name": "write_file",
                            "input": {},
                        },
                    },
                )
            )
            fragments = ['{"path": "f', f'{index}.txt", "text": "', *([piece] * 6), '"}' if index % 10 else '"']
            for fragment in fragments:
                out.write(
                    event(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": fragment},
                        },
                    )
                )
            out.write(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        out.write(
            event(
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}},
            )
        )
        out.write(event("message_stop", {"type": "message_stop"}))


def write_har_of_gzip_body(path: Path, body: bytes) -> None:
    """A HAR file of one entry whose response body is ``body``, gzip-compressed, in base64."""
    entry = {
        "request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages", "headers": []},
        "response": {
            "status": 200,
            "headers": [{"name": "content-encoding", "value": "gzip"}],
            "content": {"mimeType": "text/event-stream", "text": base64.b64encode(body).decode(), "encoding": "base64"},
        },
    }
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}))
