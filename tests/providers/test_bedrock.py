"""The AWS Bedrock adapter: ConverseStream (wrapped and named events) and InvokeModelWithResponseStream."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import Frame, Pos
from stream_doctor.capture.eventstream import encode_message, read_eventstream
from stream_doctor.providers import anthropic, bedrock, gemini
from stream_doctor.values.events import ArgsDelta, BlockStart, Event, KeepAlive, Malformed, StreamError, Unknown
from tests.helpers import accumulated


def wrapped(values: list[dict[str, Any]]) -> list[Frame]:
    return [Frame(Pos(n, n, n * 100), orjson.dumps(v), v) for n, v in enumerate(values, 1)]


def named(values: list[dict[str, Any]]) -> list[Frame]:
    """The same events as the binary framing delivers them: named by :event-type, padded with p."""
    out = []
    for n, value in enumerate(values, 1):
        ((kind, body),) = value.items()
        out.append(Frame(Pos(n, n, n * 100), b"", {**body, "p": "abcdefgh"}, None, kind))
    return out


def events(frames: list[Frame]) -> list[Event]:
    translator = bedrock.translator()
    return [e for f in frames for e in translator.feed(f)] + translator.close()


def replay(frames: list[Frame]) -> AccumulatedStream:
    return accumulated(bedrock, frames, "jsonl", "c")


def tool(index: int, tool_id: str, name: str, *pieces: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": tool_id, "name": name}}}}
    ]
    out += [{"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": p}}}} for p in pieces]
    return out + [{"contentBlockStop": {"contentBlockIndex": index}}]


CONVERSE: list[dict[str, Any]] = [
    {"messageStart": {"role": "assistant"}},
    {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Checking."}}},
    {"contentBlockStop": {"contentBlockIndex": 0}},
    *tool(1, "tooluse_a", "get_weather", '{"city":', ' "Paris"}'),
    *tool(2, "tooluse_b", "list_alarms", ""),
    {"messageStop": {"stopReason": "tool_use"}},
    {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 9}}},
]


@pytest.mark.parametrize("framing", [wrapped, named])
def test_converse_stream_in_both_forms(framing: Any) -> None:
    stream = replay(framing(CONVERSE))
    assert [(c.call_id, c.name, c.arguments) for c in stream.calls] == [
        ("tooluse_a", "get_weather", {"city": "Paris"}),
        ("tooluse_b", "list_alarms", {}),
    ]
    # The text block has no contentBlockStart: its first delta starts it, and nothing is irregular.
    assert stream.stream_problems == () and stream.problems == ()
    assert stream.messages[0].stop_category == "tool_calls" and stream.messages[0].stopped is not None
    assert [(b.index, b.block_type) for b in stream.messages[0].blocks] == [(0, "text")]


def test_reasoning_deltas_start_their_block() -> None:
    produced = events(
        wrapped(
            [
                {"messageStart": {"role": "assistant"}},
                {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Hmm"}}}},
                {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "c2ln"}}}},
            ]
        )
    )
    assert [type(e).__name__ for e in produced] == ["MessageStart", "BlockStart", "BlockDelta", "BlockDelta"]
    assert isinstance(produced[1], BlockStart) and produced[1].block_type == "reasoningContent"


@pytest.mark.parametrize(
    ("reason", "category"),
    [
        ("end_turn", "end"),
        ("max_tokens", "length"),
        ("guardrail_intervened", "filter"),
        ("content_filtered", "filter"),
        ("malformed_tool_use", "error"),
        ("model_context_window_exceeded", "length"),
    ],
)
def test_stop_reasons(reason: str, category: str) -> None:
    stream = replay(wrapped([{"messageStart": {"role": "assistant"}}, {"messageStop": {"stopReason": reason}}]))
    assert stream.messages[0].stop_category == category


@pytest.mark.parametrize("framing", [wrapped, named])
def test_exceptions_inside_the_response_are_stream_errors(framing: Any) -> None:
    exception = {"modelStreamErrorException": {"message": "boom", "originalStatusCode": 500, "originalMessage": "x"}}
    produced = events(framing([{"messageStart": {"role": "assistant"}}, exception]))
    (error,) = [e for e in produced if isinstance(e, StreamError)]
    assert error.error_type == "modelStreamErrorException" and error.message == "boom (x)"


def test_unknown_and_unusable_events() -> None:
    produced = events(
        wrapped(
            [
                {"messageTeleport": {}},
                {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"hologram": {}}}},
                {"contentBlockDelta": {"contentBlockIndex": "0", "delta": {"text": "x"}}},
                {"two": {}, "keys": {}},
                {"metadata": {"usage": {}}},
            ]
        )
    )
    assert [type(e) for e in produced] == [Unknown, Unknown, Malformed, Malformed, KeepAlive]


def test_an_empty_start_union_is_a_problem() -> None:
    stream = replay(
        wrapped(
            [
                {"messageStart": {"role": "assistant"}},
                {"contentBlockStart": {"contentBlockIndex": 0, "start": {}}},
                {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "x"}}},
                {"contentBlockStop": {"contentBlockIndex": 0}},
            ]
        )
    )
    assert [p.kind for p in stream.problems] == ["empty-start-union"] and stream.stream_problems == ()


ANTHROPIC: list[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {"id": "msg_bdrk_1", "type": "message", "role": "assistant", "model": "m", "content": []},
    },
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_bdrk_1", "name": "f", "input": {}},
    },
    {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
    {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 1}},
]


def test_invoke_model_chunks_are_decoded_and_translated_as_anthropic_events() -> None:
    chunks = [{"chunk": {"bytes": base64.b64encode(orjson.dumps(e)).decode()}} for e in ANTHROPIC]
    stream = replay(wrapped(chunks))
    assert [(c.call_id, c.arguments) for c in stream.calls] == [("toolu_bdrk_1", {"a": 1})]
    assert stream.stream_problems == () and stream.messages[0].stopped is not None
    body = b"".join(
        encode_message(
            {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"},
            orjson.dumps({"bytes": base64.b64encode(orjson.dumps(e)).decode(), "p": "abc"}),
        )
        for e in ANTHROPIC
    )
    capture = read_eventstream(body, "c.eventstream")
    assert [(c.call_id, c.arguments) for c in replay(capture.frames).calls] == [("toolu_bdrk_1", {"a": 1})]


def test_chunks_that_cannot_be_decoded() -> None:
    produced = events(wrapped([{"chunk": {"bytes": "not base64!"}}, {"chunk": {"bytes": "e30K"}}, {"chunk": {}}]))
    assert isinstance(produced[0], Malformed) and isinstance(produced[2], Malformed)
    assert isinstance(produced[1], Malformed)  # {} has no type: the Anthropic adapter says so


def test_the_hot_path_reads_tool_input_in_both_forms() -> None:
    for framing in (wrapped, named):
        translator = bedrock.translator()
        delta = {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a"'}}}}
        (produced,) = translator.feed(framing([delta])[0])
        assert isinstance(produced, ArgsDelta) and produced.fragment == '{"a"' and produced.key == 1


def test_sniff_tells_bedrock_from_the_others() -> None:
    assert bedrock.sniff(wrapped(CONVERSE)) == 100 and bedrock.sniff(named(CONVERSE)) == 100
    assert anthropic.sniff(wrapped(CONVERSE)) == 0 and gemini.sniff(wrapped(CONVERSE)) == 0
    assert bedrock.sniff(wrapped(ANTHROPIC)) == 0


def chunks(objects: list[dict[str, Any]]) -> list[Frame]:
    return wrapped([{"chunk": {"bytes": base64.b64encode(orjson.dumps(o)).decode()}} for o in objects])


FIXTURES = Path(__file__).parents[2] / "fixtures" / "bedrock"


@pytest.mark.parametrize(
    ("fixture", "calls", "stop"),
    [
        ("invoke_model_nova.jsonl", [("tooluse_3hZ8cQ1uSvK9xLr2Tb6mWg", "get_weather")], "tool_calls"),
        ("invoke_model_gpt_oss.eventstream", [("call_7f3e2a9c1b4d4e6f", "get_weather")], "tool_calls"),
        ("invoke_model_mistral.jsonl", [("K4pX9wQz2", "get_weather")], "tool_calls"),
        ("invoke_model_jamba.jsonl", [("call_5b8e0f2a4c6d4e1f", "get_weather")], "tool_calls"),
        ("invoke_model_cohere_command_r.jsonl", [(None, "get_weather")], "tool_calls"),
        ("invoke_model_llama.jsonl", [], "end"),
        ("invoke_model_titan_length.jsonl", [], "length"),
        ("invoke_model_deepseek_r1.jsonl", [], "end"),
        ("invoke_model_mixtral.jsonl", [], "end"),
    ],
)
def test_invoke_model_streams_of_every_family(fixture: str, calls: list[tuple[str | None, str]], stop: str) -> None:
    """Each family's chunks go to the translation of their shape: the calls are rebuilt whole, the
    text-only families replay their text and finish, and nothing is unknown or irregular."""
    path = FIXTURES / fixture
    capture = read_eventstream(path.read_bytes(), str(path)) if fixture.endswith(".eventstream") else None
    frames = capture.frames if capture else wrapped([orjson.loads(line) for line in path.read_bytes().splitlines()])
    stream = replay(frames)
    assert [(c.call_id, c.name) for c in stream.calls] == calls
    assert all(
        c.arguments == {"city": "Paris"} or c.name != "get_weather" or "unit" in c.arguments for c in stream.calls
    )
    assert stream.stream_problems == () and stream.problems == ()
    assert [m.stop_category for m in stream.messages] == [stop]
    if not calls:
        assert [b.block_type for b in stream.messages[0].blocks] == ["text"]


def test_mistral_large_message_chunks_are_read_as_deltas() -> None:
    """Mistral Large (2402) streams choices[].message pieces with stop_reason; its tool_calls have no index."""
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "a1B2c3D4e", "function": {"name": "f", "arguments": '{"x": 1}'}}],
    }
    stream = replay(
        chunks(
            [
                {"choices": [{"index": 0, "message": {"role": "assistant", "content": "On it."}, "stop_reason": None}]},
                {"choices": [{"index": 0, "message": message, "stop_reason": "tool_calls"}]},
            ]
        )
    )
    assert [(c.call_id, c.name, c.arguments) for c in stream.calls] == [("a1B2c3D4e", "f", {"x": 1})]
    assert stream.messages[0].stop_category == "tool_calls"


def test_invoke_chunks_of_no_known_family() -> None:
    produced = events(chunks([{"weird": 1}, {"amazon-bedrock-invocationMetrics": {}}]))
    assert isinstance(produced[0], Unknown) and "weird" in produced[0].event_type
    assert isinstance(produced[1], KeepAlive)


def test_a_text_family_stream_cut_before_its_stop_reason_is_open() -> None:
    stream = replay(
        chunks([{"generation": "Paris", "prompt_token_count": 3, "generation_token_count": 1, "stop_reason": None}])
    )
    assert stream.messages[0].stopped is None
