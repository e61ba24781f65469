"""The Cohere v2 Chat adapter."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.providers import anthropic, cohere
from stream_doctor.values.events import ArgsDelta, Event, KeepAlive, Malformed, Problem, StreamError, Unknown
from tests.helpers import accumulated


def frame(number: int, value: Any, event: str | None = None) -> Frame:
    data = b"[DONE]" if value is NOT_JSON else orjson.dumps(value)
    return Frame(Pos(number, number, number * 100), data, value, None, event)


def events(values: list[Any]) -> list[Event]:
    translator = cohere.translator()
    return [e for n, v in enumerate(values, 1) for e in translator.feed(frame(n, v))] + translator.close()


def replay(values: list[Any]) -> AccumulatedStream:
    return accumulated(cohere, [frame(n, v) for n, v in enumerate(values, 1)], "jsonl", "c.jsonl")


START = {
    "id": "5c1f",
    "type": "message-start",
    "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}},
}


def call_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    tool = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    return {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": tool}}}


def call_delta(index: int, text: str) -> dict[str, Any]:
    return {
        "type": "tool-call-delta",
        "index": index,
        "delta": {"message": {"tool_calls": {"function": {"arguments": text}}}},
    }


def end(reason: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "message-end",
        "delta": {"finish_reason": reason, **extra, "usage": {"billed_units": {}, "tokens": {}}},
    }


def test_parallel_calls_with_a_tool_plan() -> None:
    stream = replay(
        [
            START,
            {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will"}}},
            call_start(0, "weather_ab12", "weather"),
            call_delta(0, '{"location":'),
            call_delta(0, ' "Paris"}'),
            {"type": "tool-call-end", "index": 0},
            call_start(1, "time_cd34", "time"),
            {"type": "tool-call-end", "index": 1},
            end("TOOL_CALL"),
        ]
    )
    assert [(c.call_id, c.name, c.arguments) for c in stream.calls] == [
        ("weather_ab12", "weather", {"location": "Paris"}),
        ("time_cd34", "time", {}),
    ]
    assert stream.stream_problems == () and stream.messages[0].stop_category == "tool_calls"
    assert [b.block_type for b in stream.messages[0].blocks] == ["tool_plan"]
    assert stream.messages[0].blocks[0].ended is not None


def test_content_and_tool_indexes_are_kept_apart() -> None:
    content_start = {
        "type": "content-start",
        "index": 0,
        "delta": {"message": {"content": {"type": "text", "text": ""}}},
    }
    content_delta = {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "hi"}}}}
    stream = replay(
        [START, content_start, content_delta, call_start(0, "a_1", "a"), {"type": "content-end", "index": 0}]
        + [{"type": "tool-call-end", "index": 0}, end("TOOL_CALL")]
    )
    assert stream.stream_problems == () and stream.calls[0].status == "complete"


@pytest.mark.parametrize(
    ("reason", "category"),
    [
        ("COMPLETE", "end"),
        ("STOP_SEQUENCE", "end"),
        ("MAX_TOKENS", "length"),
        ("TOOL_CALL", "tool_calls"),
        ("TIMEOUT", "error"),
    ],
)
def test_finish_reasons(reason: str, category: str) -> None:
    assert replay([START, end(reason)]).messages[0].stop_category == category


def test_an_error_at_message_end_is_a_stream_error() -> None:
    produced = events([START, call_start(0, "a_1", "a"), end("ERROR", error="model failure")])
    (error,) = [e for e in produced if isinstance(e, StreamError)]
    assert (error.error_type, error.message) == ("ERROR", "model failure")
    assert replay([START, call_start(0, "a_1", "a"), end("ERROR", error="x")]).calls[0].abandon_cause == "error-event"


def test_known_events_that_carry_nothing_to_replay() -> None:
    citation = {"type": "citation-start", "index": 0, "delta": {"message": {"citations": {"start": 0, "end": 2}}}}
    produced = events(
        [START, citation, {"type": "citation-end", "index": 0}, {"type": "debug", "prompt": "…"}, NOT_JSON]
    )
    assert [e.what for e in produced if isinstance(e, KeepAlive)] == [
        "citation-start",
        "citation-end",
        "debug",
        "[DONE]",
    ]
    assert not [e for e in produced if isinstance(e, (Unknown, Malformed))]


def test_unusable_and_unknown_frames() -> None:
    listed = {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": [{"id": "x"}]}}}
    produced = events([{"type": "tool-call-delta"}, listed, {"type": "message-teleport"}, {"no": "type"}])
    assert [type(e) for e in produced] == [Malformed, Malformed, Unknown, Malformed]


def test_an_sse_event_name_that_disagrees_is_reported() -> None:
    translator = cohere.translator()
    produced = translator.feed(frame(1, START, event="message-end"))
    assert [e.kind for e in produced if isinstance(e, Problem)] == ["event-name-mismatch"]
    assert isinstance(translator.feed(frame(2, call_delta(0, "{"), event="tool-call-delta"))[0], ArgsDelta)


def test_sniff_tells_cohere_from_anthropic() -> None:
    cohere_frames = [frame(1, START), frame(2, call_start(0, "a", "a"))]
    assert cohere.sniff(cohere_frames) == 100 and anthropic.sniff(cohere_frames) == 0
    assert cohere.sniff([frame(1, {"type": "message_start", "message": {}})]) == 0
