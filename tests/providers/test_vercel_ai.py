"""The Vercel AI SDK adapters: the UI message stream (steps, toolCallId, outputs) and the v4 data stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from stream_doctor.capture import load
from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.prefixed_lines import READER as PREFIXED
from stream_doctor.capture.problem_facts import ToolInputError
from stream_doctor.engine.pipeline import replay
from stream_doctor.providers import openai_responses, vercel_ai, vercel_ai_data
from stream_doctor.providers.vercel_ai import RESET_CAUSE, UIStreamTranslator
from stream_doctor.providers.vercel_ai_data import DataStreamTranslator
from stream_doctor.rules.correlation.sd519_tool_input_error import rejected
from stream_doctor.values.events import (
    ArgsDelta,
    BlockStop,
    Event,
    Execution,
    Finish,
    KeepAlive,
    Malformed,
    MessageStart,
    MessageStop,
    Problem,
    StreamError,
    ToolStart,
    Unknown,
)
from stream_doctor.values.options import Options
from tests.conftest import fixture_files


def frame(number: int, value: Any, event: str | None = None) -> Frame:
    if isinstance(value, bytes):
        return Frame(Pos(number, number, number * 10), value, NOT_JSON, "not JSON", event)
    return Frame(Pos(number, number, number * 10), orjson.dumps(value), value, None, event)


def ui(parts: list[Any]) -> list[Event]:
    translator = UIStreamTranslator()
    return [
        e for number, part in enumerate(parts, 1) for e in translator.feed(frame(number, part))
    ] + translator.close()


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def run(tmp_path: Path, body: str, name: str = "capture.sse") -> Any:
    path = tmp_path / name
    path.write_text(body)
    return replay(str(path), Options())


def sse(parts: list[Any]) -> str:
    return "".join(f"data: {orjson.dumps(p).decode()}\n\n" for p in parts) + "data: [DONE]\n\n"


# -- the UI message stream ----------------------------------------------------------------------


def test_sniff_tells_the_ui_stream_from_responses_even_for_error_events() -> None:
    parts = [frame(1, {"type": "start"}), frame(2, {"type": "start-step"}), frame(3, {"type": "text-start", "id": "0"})]
    assert vercel_ai.sniff(parts) == 100
    assert openai_responses.sniff(parts) == 0
    ui_error = [frame(1, {"type": "error", "errorText": "Overloaded"})]
    responses_error = [frame(1, {"type": "error", "code": "server_error", "message": "x", "sequence_number": 2})]
    assert vercel_ai.sniff(ui_error) > openai_responses.sniff(ui_error)
    assert openai_responses.sniff(responses_error) > vercel_ai.sniff(responses_error)


def test_a_streamed_call_keyed_by_tool_call_id() -> None:
    events = ui(
        [
            {"type": "start", "messageId": "m1"},
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "weather"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"city":"Rome"}'},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "weather", "input": {"city": "Rome"}},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
            b"[DONE]",
        ]
    )
    assert kinds(events) == [
        "MessageStart", "ToolStart", "ArgsDelta", "BlockStop", "Finish", "MessageStop", "KeepAlive",
    ]  # fmt: skip
    start, tool, delta, stop, finish = events[:5]
    assert isinstance(start, MessageStart) and start.message_id == "m1"
    assert isinstance(tool, ToolStart) and (tool.key, tool.call_id, tool.name, tool.server_side) == (
        "c1",
        "c1",
        "weather",
        False,
    )
    assert isinstance(delta, ArgsDelta) and delta.key == "c1"
    assert isinstance(stop, BlockStop) and stop.final_input == {"city": "Rome"}
    assert isinstance(finish, Finish) and (finish.reason, finish.category) == ("tool-calls", "tool_calls")


def test_each_step_is_a_message_and_the_finish_reason_belongs_to_the_last() -> None:
    events = ui(
        [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "text-start", "id": "0"},
            {"type": "text-end", "id": "0"},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "text-start", "id": "0"},  # part ids repeat in every step
            {"type": "text-end", "id": "0"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ]
    )
    assert kinds(events) == [
        "MessageStart", "BlockStart", "BlockStop", "MessageStop", "MessageStart", "BlockStart", "BlockStop",
        "Finish", "MessageStop",
    ]  # fmt: skip


def test_start_and_steps_are_optional() -> None:
    events = ui([{"type": "text-start", "id": "t"}, {"type": "text-delta", "id": "t", "delta": "Hi"}, b"[DONE]"])
    assert kinds(events) == ["MessageStart", "BlockStart", "BlockDelta", "MessageStop"]


def test_an_available_input_alone_is_a_whole_call_and_its_output_an_execution() -> None:
    events = ui(
        [
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "rate", "input": {"from": "EUR"}},
            {"type": "tool-output-available", "toolCallId": "c1", "output": 1.1, "preliminary": True},
            {"type": "tool-output-available", "toolCallId": "c1", "output": 1.2},
        ]
    )
    assert kinds(events) == ["MessageStart", "ToolStart", "BlockStop", "Execution"]
    execution = events[-1]
    assert isinstance(execution, Execution) and (execution.call_id, execution.input) == ("c1", {"from": "EUR"})


def test_outputs_of_provider_executed_tools_are_not_executions_by_the_application() -> None:
    events = ui(
        [
            {"type": "tool-input-start", "toolCallId": "ws", "toolName": "web_search", "providerExecuted": True},
            {
                "type": "tool-input-available",
                "toolCallId": "ws",
                "toolName": "web_search",
                "input": {},
                "providerExecuted": True,
            },
            {"type": "tool-output-available", "toolCallId": "ws", "output": [], "providerExecuted": True},
            {"type": "tool-output-error", "toolCallId": "other", "errorText": "gone"},
        ]
    )
    tool = next(e for e in events if isinstance(e, ToolStart))
    assert tool.server_side
    assert [e.call_id for e in events if isinstance(e, Execution)] == ["other"]  # an unknown id is still reported


def test_tool_input_error_completes_the_call_with_a_problem() -> None:
    events = ui(
        [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "getWeather"},
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "getWeather",
                "input": {"city": 1},
                "errorText": "bad\n  input",
            },
            {
                "type": "tool-input-error",
                "toolCallId": "c2",
                "toolName": "x",
                "input": '{"a":',
                "errorText": "Invalid JSON",
            },
        ]
    )
    stops = [e for e in events if isinstance(e, BlockStop)]
    assert [(s.key, s.final_arguments) for s in stops] == [("c1", None), ("c2", '{"a":')]
    problems = [e for e in events if isinstance(e, Problem)]
    assert [p.kind for p in problems] == ["tool-input-error", "tool-input-error"]
    facts = [p.facts for p in problems if isinstance(p.facts, ToolInputError)]
    assert [f.error for f in facts] == ["bad\n  input", "Invalid JSON"]
    assert "rejected the input the model produced: bad input;" in rejected(facts[0])  # SD519 words it on one line


def test_reset_step_ends_the_step_with_its_cause_and_abort_too() -> None:
    events = ui([{"type": "start-step"}, {"type": "reset-step"}, {"type": "abort"}])
    assert kinds(events) == ["MessageStart", "MessageStop", "MessageStart", "MessageStop"]
    assert events[1].cause == RESET_CAUSE  # type: ignore[union-attr]
    assert "abort" in (events[3].cause or "")  # type: ignore[union-attr]


def test_error_parts_unknown_parts_and_garbage() -> None:
    events = ui(
        [
            {"type": "error", "errorText": "Overloaded"},
            {"type": "data-weather", "id": "w1", "data": {}},
            {"type": "tool-approval-response", "approvalId": "a1", "approved": True},
            {"type": "hologram"},
            {"type": "tool-input-delta", "toolCallId": 3, "inputTextDelta": "{"},
            {"no": "type"},
            b"not json",
            [],
        ]
    )
    assert kinds(events) == [
        "MessageStart",
        "StreamError",
        "Unknown",
        "Malformed",
        "Malformed",
        "Malformed",
        "Malformed",
    ]
    assert isinstance(events[1], StreamError) and events[1].message == "Overloaded"
    assert isinstance(events[2], Unknown) and events[2].event_type == "hologram"


def test_a_part_after_the_finish_goes_to_the_finished_message(tmp_path: Path) -> None:
    report = run(
        tmp_path,
        sse(
            [
                {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f"},
                {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
                {"type": "finish", "finishReason": "tool-calls"},
                {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{}"},
            ]
        ),
    )
    assert report.stream.capture.provider == "vercel-ai"
    assert "event-after-message-stop" in {a.kind for a in report.stream.stream_problems}


def test_a_delta_for_a_call_never_started_is_what_use_chat_throws_on(tmp_path: Path) -> None:
    report = run(
        tmp_path, sse([{"type": "start"}, {"type": "tool-input-delta", "toolCallId": "c9", "inputTextDelta": "{"}])
    )
    assert {f.code for f in report.findings} == {"SD401"}


def test_text_input_encoding_marks_free_text_input() -> None:
    (_, tool) = ui([{"type": "tool-input-start", "toolCallId": "c1", "toolName": "sql", "inputEncoding": "text"}])
    assert isinstance(tool, ToolStart) and tool.input_format == "text"


# -- the v4 data stream: container and adapter ------------------------------------------------


V4 = (
    'f:{"messageId":"msg-1"}\n'
    'b:{"toolCallId":"c1","toolName":"getWeather"}\n'
    'c:{"toolCallId":"c1","argsTextDelta":"{\\"city\\":"}\n'
    'c:{"toolCallId":"c1","argsTextDelta":"\\"Paris\\"}"}\n'
    '9:{"toolCallId":"c1","toolName":"getWeather","args":{"city":"Paris"}}\n'
    'a:{"toolCallId":"c1","result":"15C"}\n'
    'e:{"finishReason":"tool-calls","usage":{"promptTokens":1,"completionTokens":2},"isContinued":false}\n'
    'd:{"finishReason":"tool-calls","usage":{"promptTokens":1,"completionTokens":2}}\n'
)


def test_the_prefixed_container_is_sniffed_and_keeps_the_type_id() -> None:
    assert PREFIXED.sniff(V4.encode()) == 85
    assert PREFIXED.sniff(b'{"type":"start"}\n') == 0
    assert PREFIXED.sniff(b"data: {}\n\n") == 0
    assert "type id" in PREFIXED.reject_reason(b"hello\n")
    capture = PREFIXED.read(V4.encode(), "x.txt")
    assert [f.event for f in capture.frames] == ["f", "b", "c", "c", "9", "a", "e", "d"]
    assert capture.frames[4].value == {"toolCallId": "c1", "toolName": "getWeather", "args": {"city": "Paris"}}
    assert capture.frames[1].pos == Pos(2, 2, len(V4.splitlines()[0]) + 1)
    assert capture.ended_cleanly


def test_the_prefixed_container_reports_bad_lines_and_a_cut_end() -> None:
    capture = PREFIXED.read(b'0:"Hi"\nhello\n0:"cut', "x.txt")
    assert [(f.event, f.value is NOT_JSON) for f in capture.frames] == [("0", False), (None, True), ("0", True)]
    assert not capture.ended_cleanly and capture.problems[0].kind == "unterminated-event"


def test_a_v4_stream_replays(tmp_path: Path) -> None:
    report = run(tmp_path, V4, "capture.txt")
    stream = report.stream
    assert (stream.capture.container, stream.capture.provider) == ("prefixed", "vercel-ai-data")
    (call,) = stream.calls
    assert (call.call_id, call.name, call.arguments, call.status) == ("c1", "getWeather", {"city": "Paris"}, "complete")
    (execution,) = stream.executions
    assert execution.call_state == "complete" and execution.input == {"city": "Paris"}
    assert [(m.message_id, m.stop_reason) for m in stream.messages] == [("msg-1", "tool-calls")]
    assert not report.findings


def test_v4_parts() -> None:
    translator = DataStreamTranslator()
    lines = [
        ("0", "Hi"),
        ("9", {"toolCallId": "c2", "toolName": "f", "args": {}}),
        ("3", "An error occurred."),
        ("z", {}),
        ("d", {"finishReason": "error"}),
        ("d", {"finishReason": "error"}),
    ]
    events = [e for n, (t, v) in enumerate(lines, 1) for e in translator.feed(frame(n, v, t))]
    assert kinds(events) == [
        "MessageStart", "BlockStart", "BlockDelta", "ToolStart", "BlockStop", "StreamError", "Unknown",
        "Finish", "BlockStop", "MessageStop",
    ]  # fmt: skip
    assert vercel_ai_data.sniff([frame(1, {}, "b"), frame(2, {}, "9")]) == 100
    (bad,) = translator.feed(frame(9, b"oops", None))
    assert isinstance(bad, Malformed)


@pytest.mark.parametrize("fixture", fixture_files("vercel-ai", suffixes=(".txt",)))
def test_v4_fixtures_are_read_by_the_prefixed_container(fixture: Path) -> None:
    assert load(str(fixture)).container == "prefixed"


def test_keepalive_only_when_nothing_is_open() -> None:
    assert kinds(ui([b"[DONE]"])) == ["KeepAlive"]
    assert isinstance(ui([b"[DONE]"])[0], KeepAlive)
    assert isinstance(ui([{"type": "start"}, b"[DONE]"])[-1], MessageStop)


@pytest.mark.parametrize("fixture", fixture_files("vercel-ai", suffixes=(".sse", ".txt")))
def test_the_generator_path_gives_the_events_feed_gives(fixture: Path) -> None:
    frames = load(str(fixture)).frames
    make = UIStreamTranslator if fixture.suffix == ".sse" else DataStreamTranslator
    one, other = make(), make()
    assert list(one.translate(frames)) == [e for f in frames for e in other.feed(f)]
    assert one.counts == other.counts
