"""The Ollama native /api/chat adapter: NDJSON lines, whole calls, done lines and error lines."""

from __future__ import annotations

from typing import Any

import orjson

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.providers import ollama
from stream_doctor.values.events import BlockStop, Event, Malformed, StreamError, ToolStart, Unknown
from tests.helpers import accumulated


def frames(values: list[Any]) -> list[Frame]:
    return [Frame(Pos(n, n, n * 100), b"x" if v is NOT_JSON else orjson.dumps(v), v) for n, v in enumerate(values, 1)]


def events(values: list[Any]) -> list[Event]:
    translator = ollama.translator()
    return [e for f in frames(values) for e in translator.feed(f)] + translator.close()


def accumulate(values: list[Any]) -> AccumulatedStream:
    return accumulated(ollama, frames(values), "jsonl", "o.jsonl")


def line(message: dict[str, Any], done: bool = False, **final: Any) -> dict[str, Any]:
    return {
        "model": "qwen3:8b",
        "created_at": "2025-10-29T14:03:08.133592Z",
        "message": {"role": "assistant", **message},
        "done": done,
        **final,
    }


def tool(name: str, arguments: Any, index: int | None = None, call_id: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {} if index is None else {"index": index}
    function |= {"name": name, "arguments": arguments}
    return {"function": function} if call_id is None else {"id": call_id, "function": function}


DONE = line({"content": ""}, True, done_reason="stop", eval_count=31)


def test_whole_calls_complete_in_their_line_and_stop_after_calls_is_a_tool_turn() -> None:
    stream = accumulate(
        [
            line({"content": "", "tool_calls": [tool("get_temperature", {"city": "Paris"}, 0, "call_k3j9x0ab")]}),
            line({"content": "", "tool_calls": [tool("get_conditions", {"city": "Paris"}, 1, "call_p0q1r2s3")]}),
            DONE,
        ]
    )
    assert [(c.call_id, c.index, c.arguments, c.status, c.ended) for c in stream.calls] == [
        ("call_k3j9x0ab", 0, {"city": "Paris"}, "complete", Pos(1, 1, 100)),
        ("call_p0q1r2s3", 1, {"city": "Paris"}, "complete", Pos(2, 2, 200)),
    ]
    assert stream.calls[0].raw_arguments == '{"city":"Paris"}'
    message = stream.messages[0]
    assert (message.stop_reason, message.stop_category, message.stopped) == ("stop", "tool_calls", Pos(3, 3, 300))
    assert not stream.stream_problems


def test_older_servers_omit_index_0_and_ids() -> None:
    produced = events([line({"content": "", "tool_calls": [tool("f", {}), tool("f", {"a": 1}, 1)]}), DONE])
    starts = [e for e in produced if isinstance(e, ToolStart)]
    assert [(s.index, s.call_id, s.id_optional) for s in starts] == [(0, None, True), (1, None, True)]
    assert not accumulate([line({"content": "", "tool_calls": [tool("f", {})]}), DONE]).stream_problems


def test_stop_without_calls_is_a_normal_end() -> None:
    stream = accumulate([line({"content": "Hello"}), line({"content": " there", "thinking": ""}), DONE])
    assert stream.messages[0].stop_category == "end" and stream.messages[0].blocks[0].size == 11


def test_error_lines_non_lines_and_garbage() -> None:
    produced = events(
        [line({"content": "a"}), {"error": "unexpected EOF", "status": 500}, {"status": "pulling"}, NOT_JSON, [1]]
    )
    assert [type(e) for e in produced[3:]] == [StreamError, Unknown, Malformed, Malformed]  # after start, block, delta
    assert isinstance(produced[3], StreamError) and produced[3].message == "unexpected EOF"


def test_a_cut_stream_has_no_message_stop_and_calls_stay_complete() -> None:
    stream = accumulate([line({"content": "", "tool_calls": [tool("ls", {"path": "/"}, 0, "call_1")]})])
    assert stream.messages[0].stopped is None and stream.calls[0].status == "complete"
    assert [e for e in events([DONE]) if isinstance(e, BlockStop)] == []


def test_string_arguments_from_a_proxy_are_kept_as_text() -> None:
    stream = accumulate([line({"content": "", "tool_calls": [tool("f", '{"x": 2}', 0, "call_1")]}), DONE])
    assert stream.calls[0].arguments == {"x": 2}
