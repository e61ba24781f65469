"""Containers that are one document (a JSON array, a HAR file, a YAML cassette): time and peak memory.

Writes each container sized to about 20 MB and 200 MB and replays it with the CLI in a child
process (``bench_scale.run``: wall time and the child's peak resident memory), printing the ratio
of memory to file size. A container is read one element (array element, HAR entry, cassette
interaction) at a time, so its peak should follow the largest element, not the file::

    .venv/bin/python benchmarks/bench_containers.py                 # 20 MB and 200 MB, every container
    .venv/bin/python benchmarks/bench_containers.py --sizes 20 --containers json har

- ``json``: Gemini's ``streamGenerateContent`` without ``alt=sse``: one array of chunks, mostly
  text, a function call every 50th chunk (about 250 bytes a chunk, pretty-printed as Gemini does).
- ``har``: one entry per Anthropic turn (request body and a streamed reply of one tool call and
  some text, about 20 KB), as a browser exports it.
- ``vcr``: the same turns as a vcrpy cassette, the bodies as quoted scalars (what vcrpy writes).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench_scale import run


def write_json_array(path: Path, megabytes: int) -> None:
    text = {
        "candidates": [{"content": {"parts": [{"text": "Some words of the answer, with [brackets] and \"quotes\". "}],
                                    "role": "model"}, "index": 0}],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "nbw2b4pNGKr9x5sQFI9SL8m",
    }  # fmt: skip
    chunk = json.dumps(text, indent=2).encode()
    target = megabytes * 1_000_000
    with path.open("wb") as out:
        out.write(b"[")
        written = 1
        index = 0
        while written < target:
            if index:
                out.write(b"\n,")
            if index % 50 == 49:
                call = {"candidates": [{"content": {"parts": [{"functionCall": {
                    "name": "get_order_status", "args": {"order_id": f"A-{index}", "note": "x" * 200}}}],
                    "role": "model"}, "index": 0}]}  # fmt: skip
                element = json.dumps(call, indent=2).encode()
            else:
                element = chunk
            out.write(element)
            written += len(element) + 2
            index += 1
        out.write(b"\n]")


def _turn_body(turn: int) -> str:
    def event(name: str, data: dict) -> str:  # type: ignore[type-arg]
        return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"

    start = {"type": "message_start", "message": {"id": f"msg_{turn}", "type": "message", "role": "assistant",
             "content": [], "model": "claude", "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}  # fmt: skip
    parts = [event("message_start", start),
             event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})]  # fmt: skip
    parts += [
        event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Some words of the answer. "},
            },
        )  # fmt: skip
    ] * 100
    parts += [
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": f"toolu_{turn:08d}", "name": "read_file", "input": {}},
            },
        ),  # fmt: skip
        event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": f'{{"path": "f{turn}.txt"}}'},
            },
        ),  # fmt: skip
        event("content_block_stop", {"type": "content_block_stop", "index": 1}),
        event(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}},
        ),  # fmt: skip
        event("message_stop", {"type": "message_stop"}),
    ]
    return "".join(parts)


def _request_body(turn: int) -> str:
    return json.dumps(
        {
            "model": "claude",
            "max_tokens": 1024,
            "stream": True,
            "tools": [
                {"name": "read_file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
            ],
            "messages": [{"role": "user", "content": f"Read file {turn}"}],
        }  # fmt: skip
    )


def write_har(path: Path, megabytes: int) -> None:
    target = megabytes * 1_000_000
    with path.open("wb") as out:
        out.write(b'{"log": {"version": "1.2", "creator": {"name": "bench", "version": "1"}, "entries": [\n')
        written = 0
        turn = 0
        while written < target:
            entry = {
                "request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages",
                            "headers": [{"name": "content-type", "value": "application/json"},
                                        {"name": "x-api-key", "value": "sk-ant-secret"}],
                            "postData": {"mimeType": "application/json", "text": _request_body(turn)}},
                "response": {"status": 200, "headers": [{"name": "content-type", "value": "text/event-stream"}],
                             "content": {"mimeType": "text/event-stream", "text": _turn_body(turn)}},
            }  # fmt: skip
            data = (b",\n" if turn else b"") + json.dumps(entry, indent=2).encode()
            out.write(data)
            written += len(data)
            turn += 1
        out.write(b"\n]}}\n")


def write_cassette(path: Path, megabytes: int) -> None:
    target = megabytes * 1_000_000
    with path.open("wb") as out:
        out.write(b"interactions:\n")
        written = 0
        turn = 0
        while written < target:
            # JSON strings are YAML double-quoted scalars
            item = (
                f"- request:\n    body: {json.dumps(_request_body(turn))}\n    headers:\n      content-type:\n"
                f"      - application/json\n      x-api-key:\n      - sk-ant-secret\n    method: POST\n"
                f"    uri: https://api.anthropic.com/v1/messages\n  response:\n    body:\n"
                f"      string: {json.dumps(_turn_body(turn))}\n    headers:\n      content-type:\n"
                f"      - text/event-stream\n    status:\n      code: 200\n      message: OK\n"
            ).encode()
            out.write(item)
            written += len(item)
            turn += 1
        out.write(b"version: 1\n")


WRITERS = {
    "json": (write_json_array, "array.json"),
    "har": (write_har, "turns.har"),
    "vcr": (write_cassette, "turns.yaml"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[20, 200], help="capture sizes in MB")
    parser.add_argument("--containers", nargs="*", default=list(WRITERS), choices=list(WRITERS))
    options = parser.parse_args()
    peaks: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        print(f"{'capture':>9} {'container':<10} {'command':<22} {'time':>8} {'peak RSS':>9} {'RSS/file':>8}")
        for size in options.sizes:
            for name in options.containers:
                write, filename = WRITERS[name]
                path = where / f"{size}mb_{filename}"
                write(path, size)
                megabytes = path.stat().st_size / 1e6
                for label, args in (("replay --format json", ["replay", str(path), "--format", "json"]),
                                    ("check", ["check", str(path), "--isolated"])):  # fmt: skip
                    elapsed, peak, code, _ = run(args, where)
                    print(
                        f"{megabytes:7.0f}MB {name:<10} {label:<22} {elapsed:7.1f}s {peak:7,}MB "
                        f"{peak / megabytes:7.1f}x  (exit {code})"
                    )
                    sys.stdout.flush()
                    peaks.setdefault(f"{name} {label}", []).append(
                        f"{megabytes:.0f} MB: {peak:,} MB in {elapsed:.1f} s"
                    )
                path.unlink()
    print("\npeak memory (resident, the whole process):")
    for label, figures in peaks.items():
        print(f"  {label:<30} " + "; ".join(figures))


if __name__ == "__main__":
    main()
