"""The OpenAI Responses adapter: keyed by output_index, completion at `.done`, summaries, sequence numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from stream_doctor.capture import load
from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import ArgumentsWithoutDeltas, ItemIdRotated, SequenceIrregular
from stream_doctor.engine.pipeline import replay
from stream_doctor.providers import anthropic, openai_responses
from stream_doctor.providers.openai_responses import ResponsesTranslator
from stream_doctor.values.events import (
    MISSING,
    ArgsDelta,
    BlockStop,
    CallSummary,
    Event,
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
    data = value if isinstance(value, bytes) else orjson.dumps(value)
    return Frame(Pos(number, number, number * 10), data, NOT_JSON if isinstance(value, bytes) else value, None, event)


class Feed:
    """Feeds events to one translator, numbering them and filling in sequence numbers."""

    def __init__(self) -> None:
        self.translator = ResponsesTranslator()
        self.number = 0
        self.sequence = 0

    def __call__(self, kind: str, sequence: bool = True, **fields: Any) -> list[Event]:
        value: dict[str, Any] = {"type": kind, **fields}
        if sequence:
            if kind == "response.created":
                self.sequence = 0
            value["sequence_number"] = self.sequence
            self.sequence += 1
        self.number += 1
        return self.translator.feed(frame(self.number, value))

    def created(self) -> list[Event]:
        return self("response.created", response={"id": "resp_1", "model": "gpt-5.1", "status": "in_progress"})

    def call(
        self, index: int = 0, item_id: str = "fc_1", call_id: str = "call_1", name: str = "get_weather"
    ) -> list[Event]:
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": name,
        }
        return self("response.output_item.added", output_index=index, item=item)


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def test_sniff_tells_responses_from_anthropic() -> None:
    frames = [
        frame(1, {"type": "response.created", "sequence_number": 0, "response": {}}),
        frame(2, {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {}}),
    ]
    assert openai_responses.sniff(frames) == 100
    assert anthropic.sniff(frames) == 0
    assert openai_responses.sniff([frame(1, {"type": "message_start", "message": {}})]) == 0


def test_function_call_is_keyed_by_output_index_with_call_id_as_its_id() -> None:
    feed = Feed()
    (start,) = feed.created()
    assert isinstance(start, MessageStart) and start.message_id == "resp_1"
    (tool,) = feed.call(index=2, item_id="fc_9", call_id="call_9")
    assert isinstance(tool, ToolStart)
    assert (tool.key, tool.index, tool.call_id, tool.name, tool.start_input) == (2, 2, "call_9", "get_weather", "")
    (delta,) = feed(
        "response.function_call_arguments.delta", item_id="fc_9", output_index=2, delta='{"a":', obfuscation="x"
    )
    assert delta == ArgsDelta(delta.pos, 2, '{"a":', "response.function_call_arguments.delta")
    (stop,) = feed("response.function_call_arguments.done", item_id="fc_9", output_index=2, arguments='{"a":1}')
    assert isinstance(stop, BlockStop) and stop.key == 2 and stop.final_arguments == '{"a":1}'
    done = feed(
        "response.output_item.done",
        output_index=2,
        item={
            "type": "function_call",
            "id": "fc_9",
            "call_id": "call_9",
            "name": "get_weather",
            "arguments": '{"a":1}',
            "status": "completed",
        },
    )
    assert kinds(done) == ["CallSummary"]
    assert feed.translator.counts["response.function_call_arguments.delta"] == 1


def test_a_delta_found_by_item_id_when_it_has_no_output_index() -> None:
    feed = Feed()
    feed.created()
    feed.call(index=0, item_id="fc_1")
    (delta,) = feed("response.function_call_arguments.delta", item_id="fc_1", delta="{}")
    assert isinstance(delta, ArgsDelta) and delta.key == 0
    (stray,) = feed("response.function_call_arguments.delta", item_id="fc_unknown", delta="{}")
    assert isinstance(stray, ArgsDelta) and stray.key is None  # no correlator: the accumulator attributes it


def test_an_item_id_that_changes_is_reported_once_and_the_call_stays_keyed_by_index() -> None:
    feed = Feed()
    feed.created()
    feed.call(index=1, item_id="fc_a")
    first = feed("response.function_call_arguments.delta", item_id="fc_b", output_index=1, delta='{"x"')
    second = feed("response.function_call_arguments.delta", item_id="fc_c", output_index=1, delta=":1}")
    assert kinds(first) == ["Problem", "ArgsDelta"] and kinds(second) == ["ArgsDelta"]
    problem = first[0]
    assert isinstance(problem, Problem) and problem.kind == "item-id-rotated"
    assert isinstance(problem.facts, ItemIdRotated) and (problem.facts.added, problem.facts.named) == ("fc_a", "fc_b")
    assert {e.key for e in first + second if isinstance(e, ArgsDelta)} == {1}


def test_sequence_numbers_lost_reordered_or_missing() -> None:
    feed = Feed()
    feed.created()
    feed.sequence = 5  # events 1-4 were lost
    gap = feed.call()
    problems = [p for p in gap if isinstance(p, Problem)]
    assert [p.kind for p in problems] == ["sequence-gap"]
    facts = problems[0].facts
    assert isinstance(facts, SequenceIrregular) and (facts.previous, facts.number) == (0, 5)  # 4 events lost
    feed.sequence = 3
    late = feed("response.in_progress", response={})
    assert [p.kind for p in late if isinstance(p, Problem)] == ["sequence-disorder"]
    missing = feed("response.function_call_arguments.delta", sequence=False, item_id="fc_1", output_index=0, delta="{")
    again = feed("response.function_call_arguments.delta", sequence=False, item_id="fc_1", output_index=0, delta="}")
    assert [p.kind for p in missing if isinstance(p, Problem)] == ["sequence-missing"]
    assert not [p for p in again if isinstance(p, Problem)]  # once per response


def test_a_stream_without_sequence_numbers_is_not_reported() -> None:
    feed = Feed()
    events = feed("response.created", sequence=False, response={})
    events += feed(
        "response.output_item.added", sequence=False, output_index=0, item={"type": "message", "id": "msg_1"}
    )
    assert not [e for e in events if isinstance(e, Problem)]


def test_only_done_and_no_deltas_is_noted_and_completes_the_call() -> None:
    feed = Feed()
    feed.created()
    feed.call()
    out = feed("response.function_call_arguments.done", item_id="fc_1", output_index=0, arguments='{"city":"Porto"}')
    assert kinds(out) == ["Problem", "BlockStop"]
    problem = out[0]
    assert isinstance(problem, Problem) and problem.kind == "arguments-without-deltas"
    assert isinstance(problem.facts, ArgumentsWithoutDeltas) and problem.facts.size == 16


def test_output_item_done_completes_a_call_whose_done_event_never_came() -> None:
    feed = Feed()
    feed.created()
    feed.call()
    feed("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"a":1}')
    out = feed(
        "response.output_item.done",
        output_index=0,
        item={
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"a":1}',
            "status": "completed",
        },
    )
    assert kinds(out) == ["BlockStop", "CallSummary"]
    assert out[0].final_arguments == '{"a":1}'  # type: ignore[union-attr]


def test_an_incomplete_item_is_a_restatement_not_a_completion() -> None:
    feed = Feed()
    feed.created()
    feed.call()
    out = feed(
        "response.output_item.done",
        output_index=0,
        item={
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"a":',
            "status": "incomplete",
        },
    )
    assert kinds(out) == ["CallSummary"]


@pytest.mark.parametrize(
    ("kind", "response", "expected"),
    [
        ("response.completed", {"status": "completed", "output": []}, ("completed", "end")),
        (
            "response.incomplete",
            {"incomplete_details": {"reason": "max_output_tokens"}},
            ("max_output_tokens", "length"),
        ),
        ("response.incomplete", {"incomplete_details": {"reason": "content_filter"}}, ("content_filter", "filter")),
        ("response.incomplete", {"incomplete_details": None}, ("incomplete", "other")),
        ("response.failed", {"error": {"code": "server_error", "message": "boom"}}, ("failed", "error")),
    ],
)
def test_terminal_events_map_to_finish_categories(
    kind: str, response: dict[str, Any], expected: tuple[str, str]
) -> None:
    feed = Feed()
    feed.created()
    out = feed(kind, response=response)
    finish = next(e for e in out if isinstance(e, Finish))
    assert (finish.reason, finish.category) == expected
    assert isinstance(out[-1], MessageStop)
    if kind == "response.failed":
        error = next(e for e in out if isinstance(e, StreamError))
        assert (error.error_type, error.message) == ("server_error", "boom")


def test_a_completed_response_with_a_client_call_waits_for_results() -> None:
    feed = Feed()
    feed.created()
    feed.call()
    out = feed("response.completed", response={"status": "completed", "output": []})
    finish = next(e for e in out if isinstance(e, Finish))
    assert finish.category == "tool_calls"


def test_completed_output_restates_calls_by_position() -> None:
    feed = Feed()
    feed.created()
    output = [
        {"type": "message", "id": "msg_1"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"},
        {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_2", "name": "g", "input": "SELECT 1"},
    ]
    out = feed("response.completed", response={"status": "completed", "output": output})
    summaries = [e for e in out if isinstance(e, CallSummary)]
    assert [(s.key, s.call_id, s.arguments, s.input) for s in summaries] == [
        (1, "call_1", "{}", MISSING),
        (2, "call_2", None, "SELECT 1"),
    ]


@pytest.mark.parametrize(
    "error",
    [
        {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None},
        {
            "type": "error",
            "error": {"type": "rate_limit_exceeded", "code": "rate_limit_exceeded", "message": "Slow down"},
        },
    ],
)
def test_error_events_of_both_shapes(error: dict[str, Any]) -> None:
    feed = Feed()
    feed.created()
    fields = {k: v for k, v in error.items() if k != "type"}
    (event,) = feed("error", **fields)
    assert isinstance(event, StreamError) and (event.error_type, event.message) == ("rate_limit_exceeded", "Slow down")
    failed = feed("response.failed", response={"error": {"code": "rate_limit_exceeded", "message": "Slow down"}})
    assert not [e for e in failed if isinstance(e, StreamError)]  # reported once, at the error event


def test_custom_tool_input_is_free_text() -> None:
    feed = Feed()
    feed.created()
    item = {
        "id": "ctc_1",
        "type": "custom_tool_call",
        "status": "in_progress",
        "call_id": "call_1",
        "input": "",
        "name": "run_sql",
    }
    (tool,) = feed("response.output_item.added", output_index=0, item=item)
    assert isinstance(tool, ToolStart) and tool.input_format == "text" and not tool.server_side


@pytest.mark.parametrize(
    ("item", "server_side", "call_id", "name"),
    [
        ({"type": "web_search_call", "id": "ws_1", "status": "in_progress"}, True, "ws_1", "web_search"),
        ({"type": "mcp_call", "id": "mcp_1", "name": "search", "arguments": ""}, True, "mcp_1", "search"),
        (
            {"type": "mcp_approval_request", "id": "mcpr_1", "name": "create", "arguments": "{}"},
            True,
            "mcpr_1",
            "create",
        ),
        (
            {"type": "tool_search_call", "id": "tsc_1", "call_id": None, "execution": "server", "arguments": {}},
            True,
            "tsc_1",
            "tool_search",
        ),
        (
            {"type": "tool_search_call", "id": "tsc_2", "call_id": "call_2", "execution": "client", "arguments": {}},
            False,
            "call_2",
            "tool_search",
        ),
        (
            {
                "type": "apply_patch_call",
                "id": "apc_1",
                "call_id": "call_3",
                "operation": {"type": "create_file", "diff": "", "path": "a.md"},
            },
            False,
            "call_3",
            "apply_patch",
        ),
        ({"type": "program", "id": "cm_1", "call_id": "call_4", "code": ""}, True, "call_4", "program"),
        (
            {"type": "shell_call", "id": "sh_1", "call_id": "call_5", "action": {"commands": []}},
            False,
            "call_5",
            "shell",
        ),
    ],
)
def test_hosted_and_other_call_items(item: dict[str, Any], server_side: bool, call_id: str, name: str) -> None:
    feed = Feed()
    feed.created()
    (tool,) = feed("response.output_item.added", output_index=0, item=item)
    assert isinstance(tool, ToolStart)
    assert (tool.server_side, tool.call_id, tool.name, tool.block_type) == (server_side, call_id, name, item["type"])


def test_unknown_things_are_reported_never_dropped_and_never_crash() -> None:
    feed = Feed()
    feed.created()
    added = feed("response.output_item.added", output_index=0, item={"type": "hologram_call", "id": "hc_1"})
    assert kinds(added) == ["BlockStart", "Unknown"]
    assert kinds(feed("response.teleport.delta", output_index=0)) == ["Unknown"]
    translator = feed.translator
    assert isinstance(translator.feed(frame(90, b"[DONE]")), list)
    (done,) = translator.feed(frame(90, b"[DONE]"))
    assert isinstance(done, KeepAlive)
    (bad,) = translator.feed(frame(91, b"{not json"))
    assert isinstance(bad, Malformed)
    weird: list[Any] = [
        [],
        {"type": 3},
        {"type": "response.output_item.added"},
        {"type": "response.output_item.added", "output_index": "0", "item": {}},
        {"type": "response.output_item.done", "output_index": 0, "item": "x"},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": 5},
        {"type": "response.function_call_arguments.done", "output_index": 7},
        {"type": "response.completed", "response": {"output": [None, 1, {"type": "function_call"}]}},
        {"type": "response.failed", "response": None},
        {"type": "error", "error": "x"},
    ]
    for number, value in enumerate(weird, 100):
        assert isinstance(translator.feed(frame(number, value)), list)  # no traceback, whatever comes
    assert kinds(
        translator.feed(frame(200, {"type": "response.output_text.delta", "output_index": 0, "delta": "hi"}))
    ) == ["BlockDelta"]
    assert isinstance(translator.feed(frame(201, {"type": "response.teleport"}))[0], Unknown)


def test_sse_event_name_that_disagrees_with_the_type() -> None:
    translator = ResponsesTranslator()
    out = translator.feed(frame(1, {"type": "response.created", "response": {}}, event="response.in_progress"))
    assert [p.kind for p in out if isinstance(p, Problem)] == ["event-name-mismatch"]


def write(tmp_path: Path, events: list[dict[str, Any]]) -> str:
    path = tmp_path / "capture.sse"
    path.write_bytes(b"".join(b"event: %s\ndata: %s\n\n" % (e["type"].encode(), orjson.dumps(e)) for e in events))
    return str(path)


def test_a_custom_tool_call_is_never_reported_as_unparseable(tmp_path: Path) -> None:
    item = {
        "id": "ctc_1",
        "type": "custom_tool_call",
        "status": "in_progress",
        "call_id": "call_1",
        "input": "",
        "name": "run_sql",
    }
    events = [
        {"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1"}},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
        {
            "type": "response.custom_tool_call_input.delta",
            "sequence_number": 2,
            "item_id": "ctc_1",
            "output_index": 0,
            "delta": "SELECT {",
        },
        {
            "type": "response.custom_tool_call_input.done",
            "sequence_number": 3,
            "item_id": "ctc_1",
            "output_index": 0,
            "input": "SELECT {",
        },
        {
            "type": "response.completed",
            "sequence_number": 4,
            "response": {"status": "completed", "output": [dict(item, input="SELECT {", status="completed")]},
        },
    ]
    report = replay(write(tmp_path, events), Options())
    (call,) = report.stream.calls
    assert call.input_format == "text" and call.arguments == "SELECT {" and call.parse_failure is None
    assert "free text" in call.input_source
    assert not report.findings


def test_a_response_ends_at_its_terminal_event_and_each_response_is_a_message(tmp_path: Path) -> None:
    events = []
    for response in ("resp_1", "resp_2"):
        events += [
            {"type": "response.created", "sequence_number": 0, "response": {"id": response}},
            {
                "type": "response.completed",
                "sequence_number": 1,
                "response": {"id": response, "status": "completed", "output": []},
            },
        ]
    stream = replay(write(tmp_path, events), Options()).stream
    assert [(m.message_id, m.stop_reason, m.stop_category, m.stopped is not None) for m in stream.messages] == [
        ("resp_1", "completed", "end", True),
        ("resp_2", "completed", "end", True),
    ]


@pytest.mark.parametrize("fixture", fixture_files("openai-responses", suffixes=(".sse",)))
def test_the_generator_path_gives_the_events_feed_gives(fixture: Path) -> None:
    frames = load(str(fixture)).frames
    one, other = ResponsesTranslator(), ResponsesTranslator()
    assert list(one.translate(frames)) == [e for f in frames for e in other.feed(f)]
    assert one.counts == other.counts
