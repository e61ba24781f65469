"""Peak memory does not grow with the file: a capture read as it is replayed (SSE, JSON Lines,
a JSON array; gzipped or not) holds one piece of the file and what its calls keep, not its frames. The CLI runs
in a subprocess under an address-space limit (as in ``test_adversarial``); the same stream with
ten times as many frames must peak within a few MB of the small one. (Keeping the frames, as the
replay did, costs about ten times the file: +150 MB here.)
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.test_adversarial import run_cli

#: big captures replayed by the CLI in a subprocess under an address-space limit
pytestmark = [pytest.mark.slow]

#: What ten times the frames may add to the peak: allocator and chunk noise, not the file.
MARGIN_KB = 8 << 10


def _sse(frames: int) -> bytes:
    """An Anthropic turn: text deltas and pings around one tool call (about 100 bytes a frame)."""

    def event(name: str, data: dict) -> bytes:  # type: ignore[type-arg]
        return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()

    start = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
             "content": [], "model": "claude", "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}  # fmt: skip
    text = event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": "Some words of the answer. "}})  # fmt: skip
    ping = event("ping", {"type": "ping"})
    parts = [event("message_start", start),
             event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
             (text + ping) * (frames // 2),
             event("content_block_stop", {"type": "content_block_stop", "index": 0}),
             event("content_block_start", {"type": "content_block_start", "index": 1,
                   "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
             event("content_block_delta", {"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": '{"path": "a.txt"}'}}),
             event("content_block_stop", {"type": "content_block_stop", "index": 1}),
             event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}}),
             event("message_stop", {"type": "message_stop"})]  # fmt: skip
    return b"".join(parts)


def _jsonl(frames: int) -> bytes:
    """An OpenAI Chat turn as JSON lines: content chunks around one tool call."""

    def chunk(delta: dict, finish: str | None = None) -> bytes:  # type: ignore[type-arg]
        record = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt",
                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
        return json.dumps(record, separators=(",", ":")).encode() + b"\n"

    call = {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}]}  # fmt: skip
    return (
        chunk({"role": "assistant", "content": ""})
        + chunk({"content": "Some words. "}) * frames
        + chunk(call)
        + chunk({}, "tool_calls")
    )


def _json_array(frames: int) -> bytes:
    """A Gemini turn as ``streamGenerateContent`` sends it without ``alt=sse``: one pretty-printed array."""

    def chunk(part: dict, finish: str | None = None) -> bytes:  # type: ignore[type-arg]
        candidate = {"content": {"parts": [part], "role": "model"}, "index": 0} | (
            {"finishReason": finish} if finish else {}
        )
        return json.dumps({"candidates": [candidate], "modelVersion": "gemini-2.5-flash"}, indent=2).encode()

    text = chunk({"text": 'Some words, with [brackets] and "quotes". '})
    call = chunk({"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}}, "STOP")
    return b"[" + b"\n,".join([text] * frames + [call]) + b"\n]"


@pytest.mark.parametrize(
    ("name", "build", "frames"),
    [("turn.sse", _sse, 20_000), ("turn.jsonl.gz", _jsonl, 12_000), ("turn.json", _json_array, 8_000)],
    ids=["sse", "jsonl-gzip", "json-array"],
)
def test_ten_times_the_frames_peak_within_a_few_mb(name: str, build, frames: int, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    peaks = []
    sizes = []
    for count in (frames, frames * 10):
        path = tmp_path / f"{count}-{name}"
        data = build(count)
        sizes.append(len(data))
        path.write_bytes(gzip.compress(data, 1) if name.endswith(".gz") else data)
        ran = run_cli("replay", str(path), "--format", "json")
        assert ran.code == 0, ran.err
        report = json.loads(ran.out)
        assert report["capture"]["events"] >= count and len(report["calls"]) == 1
        peaks.append(ran.peak_kb)
    small, large = peaks
    assert sizes[1] - sizes[0] > 15 << 20  # the file grew by more than 15 MB
    assert large - small < MARGIN_KB, (small, large)


def test_a_sessions_peak_grows_at_most_twice_its_bytes(tmp_path: Path) -> None:
    """An agent session's requests repeat their history, so its bytes grow with the square of its
    turns: read piece by piece with each repeated item kept once, three times the turns (about
    eight times the bytes) add at most twice the added bytes to the peak. (Read whole with every
    request kept parsed, as before, the peak grew by nine times the file.)"""
    from benchmarks.sessions import session

    peaks, sizes = [], []
    for turns in (100, 300):
        path = tmp_path / f"session-{turns}.jsonl"
        path.write_bytes(session("anthropic", turns))
        sizes.append(path.stat().st_size)
        ran = run_cli("replay", str(path), "--format", "json")
        assert ran.code == 0, ran.err
        assert len(json.loads(ran.out)["turns"]) == turns
        peaks.append(ran.peak_kb)
    grown_kb = (sizes[1] - sizes[0]) >> 10
    assert grown_kb > 12 << 10  # the file grew by more than 12 MB
    assert peaks[1] - peaks[0] < 2 * grown_kb, (peaks, sizes)
