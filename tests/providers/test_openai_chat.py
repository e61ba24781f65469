"""The OpenAI Chat Completions adapter: correlation, completion, message boundaries, robustness."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from stream_doctor.accumulate.irregularities import IdRepeated, NameRepeated
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import NOT_JSON, RELEASED, Frame, Pos
from stream_doctor.capture.problem_facts import EndOfStreamMissing
from stream_doctor.engine.pipeline import replay as replay_file
from stream_doctor.providers import ADAPTERS, detect, mistral, ollama, openai_chat
from stream_doctor.values.events import (
    ArgsDelta,
    BlockStop,
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
from tests.helpers import accumulated

DONE: Any = NOT_JSON


def frame(number: int, value: Any, event: str | None = None) -> Frame:
    data = b"[DONE]" if value is DONE else orjson.dumps(value)
    return Frame(Pos(number, number * 2 - 1, number * 100), data, value, None, event)


def frames(values: list[Any]) -> list[Frame]:
    return [frame(n, v) for n, v in enumerate(values, 1)]


def events(values: list[Any], adapter: Any = openai_chat) -> list[Event]:
    translator = adapter.translator()
    return [e for f in frames(values) for e in translator.feed(f)] + translator.close()


def accumulate(values: list[Any], adapter: Any = openai_chat, container: str = "sse") -> AccumulatedStream:
    return accumulated(adapter, frames(values), container)


def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0, cid: str = "chatcmpl-1") -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": 1761734412,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def call(index: int | None, call_id: str | None = None, name: str | None = None, arguments: str | None = "") -> Any:
    entry: dict[str, Any] = {} if index is None else {"index": index}
    if call_id is not None:
        entry["id"] = call_id
        entry["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    entry["function"] = function
    return {"tool_calls": [entry]}


def usage_chunk() -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 9}}


ONE_CALL = [
    chunk({"role": "assistant", "content": None}),
    chunk(call(0, "call_A", "get_weather")),
    chunk(call(0, arguments='{"city":')),
    chunk(call(0, arguments=' "Paris"}')),
    chunk({}, "tool_calls"),
    usage_chunk(),
    DONE,
]


# -- one call, end to end ----------------------------------------------------------------------


def test_one_call_completes_at_its_finish_reason() -> None:
    stream = accumulate(ONE_CALL)
    (call_,) = stream.calls
    assert (call_.call_id, call_.name, call_.arguments) == ("call_A", "get_weather", {"city": "Paris"})
    assert call_.status == "complete" and call_.ended == Pos(5, 9, 500)
    assert call_.input_source == "3 function.arguments fragments"
    assert stream.messages[0].stop_reason == "tool_calls" and stream.messages[0].stop_category == "tool_calls"
    assert stream.messages[0].stopped == Pos(7, 13, 700)  # data: [DONE]
    assert not stream.stream_problems


def test_the_usage_chunk_is_liveness_not_a_malformed_choice() -> None:
    produced = events(ONE_CALL)
    assert any(isinstance(e, KeepAlive) and e.what == "usage" for e in produced)
    assert not [e for e in produced if isinstance(e, (Malformed, Unknown))]


def test_fast_and_checked_paths_give_the_same_events() -> None:
    values = ONE_CALL[:4] + [chunk(call(0, arguments="x"), cid="other")] + ONE_CALL[4:]
    translator = openai_chat.translator()
    fast = list(translator.translate(frames(values))) + translator.close()
    assert fast == events(values)
    released = frames(values)
    list(openai_chat.translator().translate(released, release=True))
    assert released[2].value is RELEASED and released[1].value is not RELEASED


# -- correlation -------------------------------------------------------------------------------


def test_keys_are_choice_and_index_and_a_new_id_naming_a_tool_is_a_new_call() -> None:
    stream = accumulate(
        [
            chunk(call(0, "call_A", "get_weather", '{"city":"Berlin"}')),
            chunk(call(0, "call_B", "get_weather", '{"city":"Munich"}')),
            chunk(call(0, arguments="")),  # goes to the latest call on index 0
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    assert [(c.call_id, c.arguments, c.status) for c in stream.calls] == [
        ("call_A", {"city": "Berlin"}, "complete"),
        ("call_B", {"city": "Munich"}, "complete"),
    ]
    assert [a.kind for a in stream.stream_problems] == ["index-shared"]


def test_a_new_id_without_a_name_is_the_same_call_whose_id_changed() -> None:
    stream = accumulate(
        [
            chunk(call(0, "call_A", "read_file", "{")),
            chunk(call(0, "call_Z", None, '"path": "a"')),
            chunk(call(None, "call_Z", None, "}")),  # found by its (new) id, without an index
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    (call_,) = stream.calls
    assert call_.call_id == "call_A" and call_.arguments == {"path": "a"}
    assert [a.kind for a in stream.stream_problems] == ["id-changed", "id-changed"]


def test_repeated_id_and_name_are_passed_on_not_concatenated() -> None:
    stream = accumulate(
        [
            chunk(call(0, "call_A", "search", '{"q":')),
            chunk(call(0, "call_A", "search", ' "x"}')),
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    assert stream.calls[0].call_id == "call_A" and stream.calls[0].name == "search"
    assert {a.kind: a.count for a in stream.stream_problems if isinstance(a, (IdRepeated, NameRepeated))} == {
        "id-repeated": 2,
        "name-repeated": 2,
    }


def test_blank_ids_are_ignored_and_blank_names_are_reported() -> None:
    stream = accumulate(
        [
            chunk(call(0, "call_A", "fetch", "")),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "", "type": "function", "function": {"name": "", "arguments": "{}"}}
                    ]
                }
            ),
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    assert stream.calls[0].call_id == "call_A" and stream.calls[0].name == "fetch"
    assert [a.kind for a in stream.stream_problems] == ["name-blank"]


def test_no_index_keys_by_id_and_no_correlator_goes_to_the_latest_call() -> None:
    stream = accumulate(
        [
            chunk(call(None, "g1", "web_search", '{"query":')),
            chunk(call(None, None, None, ' "museum"}')),
            chunk({}, "stop"),
            DONE,
        ]
    )
    (call_,) = stream.calls
    assert call_.index is None and call_.arguments == {"query": "museum"}
    assert [a.kind for a in stream.stream_problems] == ["uncorrelated-fragment"]


def test_a_late_name_and_a_fragment_for_an_index_never_named_still_make_a_call() -> None:
    stream = accumulate(
        [
            chunk(call(0, "call_A", None, "")),
            chunk(call(0, None, "translate", "{}")),
            chunk(call(1, None, None, "{}")),
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    assert [(c.call_id, c.name) for c in stream.calls] == [("call_A", "translate"), (None, None)]
    assert [a.kind for a in stream.stream_problems] == ["name-late", "call-without-id-or-name"]


def test_the_legacy_function_call_has_no_id_and_needs_none() -> None:
    stream = accumulate(
        [
            chunk({"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": ""}}),
            chunk({"function_call": {"arguments": '{"q": 1}'}}),
            chunk({}, "function_call"),
            DONE,
        ]
    )
    (call_,) = stream.calls
    assert (call_.call_id, call_.name, call_.arguments, call_.block_type) == (None, "lookup", {"q": 1}, "function_call")
    assert stream.messages[0].stop_category == "tool_calls" and not stream.stream_problems


def test_arguments_that_are_an_object_are_read_and_reported() -> None:
    produced = events(
        [
            chunk(call(0, "call_A", "f", None) | {}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": {"a": 1}}}]}),
        ]
    )
    assert any(isinstance(e, Problem) and e.kind == "malformed-frame" for e in produced)
    assert [e.fragment for e in produced if isinstance(e, ArgsDelta)] == ['{"a":1}']


# -- completion and termination ----------------------------------------------------------------


def test_length_ends_the_choice_without_completing_its_call() -> None:
    stream = accumulate([chunk(call(0, "call_A", "save", '{"text": "abc')), chunk({}, "length"), DONE])
    (call_,) = stream.calls
    assert call_.status == "abandoned" and call_.abandon_cause == "max-tokens"


def test_done_without_finish_reason_completes_the_calls_and_says_the_reason_is_missing() -> None:
    # The server ended the stream itself: openai-python's helper, the AI SDK and LangChain hand the call over.
    stream = accumulate([chunk(call(0, "call_A", "save", "{}")), DONE])
    assert stream.calls[0].status == "complete"
    assert [p.kind for p in stream.problems] == ["finish-reason-missing"]


def test_a_call_that_starts_after_the_finish_reason_completes_at_the_next_one() -> None:
    stream = accumulate(
        [
            chunk(call(0, "call_A", "f", "{}"), "tool_calls"),
            chunk(call(1, "call_B", "g", "{}")),
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    assert [(c.call_id, c.status) for c in stream.calls] == [("call_A", "complete"), ("call_B", "complete")]
    assert [p.kind for p in stream.problems] == ["call-after-finish-reason"]


def test_eof_after_every_choice_finished_ends_the_message_and_says_done_was_missing() -> None:
    produced = events([chunk(call(0, "call_A", "f", "{}")), chunk({}, "tool_calls")])
    problem = next(e for e in produced if isinstance(e, Problem))
    assert problem.kind == "end-of-stream-missing" and problem.facts == EndOfStreamMissing(("tool_calls",))
    assert isinstance(produced[-1], MessageStop)


def test_eof_before_finish_reason_leaves_the_message_open() -> None:
    stream = accumulate([chunk(call(0, "call_A", "f", '{"a"'))])
    assert stream.messages[0].stopped is None and stream.calls[0].abandon_cause == "stream-cut"


def test_eof_after_the_usage_chunk_ends_the_calls_and_says_the_reason_and_done_are_missing() -> None:
    # OpenAI sends the usage chunk (choices: []) only once the request is over (watsonx.ai, forced tool)
    stream = accumulate([chunk(call(0, "call_A", "f", '{"a": 1}')), usage_chunk()])
    assert [c.status for c in stream.calls] == ["complete"] and stream.messages[0].stopped is not None
    assert [p.kind for p in stream.problems] == ["finish-reason-missing", "end-of-stream-missing"]
    assert stream.problems[0].facts.at_usage_end and stream.problems[1].facts.after_usage


def test_a_chunk_after_the_usage_chunk_then_eof_is_still_a_cut() -> None:
    stream = accumulate([chunk(call(0, "call_A", "f", '{"a"')), usage_chunk(), chunk(call(0, arguments=": 1"))])
    assert stream.messages[0].stopped is None and stream.calls[0].abandon_cause == "stream-cut"


def test_the_message_stop_names_the_choices_no_chunk_gave_a_role() -> None:
    # openai-node's finalizeChatCompletion throws "missing role for choice N" (clients/openai_node.py)
    assert events(ONE_CALL)[-1] == MessageStop(Pos(7, 13, 700))  # a role: the event as it always was
    without_role = [chunk(call(0, "call_A", "f", "{}")), chunk({}, "tool_calls"), DONE]
    assert events(without_role)[-1] == MessageStop(Pos(3, 5, 300), roleless=(0,))
    # the Finish names them as of its chunk (a stream cut after it has no MessageStop a client profile sees)
    assert Finish(Pos(5, 9, 500), "tool_calls", "tool_calls") in events(ONE_CALL)
    assert Finish(Pos(2, 3, 200), "tool_calls", "tool_calls", (0,)) in events(without_role)
    # a blank or null role is none (the SDK keeps only a truthy one); a role on a later chunk counts
    assert events([chunk({"role": ""}), *without_role])[-1].roleless == (0,)  # type: ignore[union-attr]
    assert events([chunk({"role": None}), *without_role])[-1].roleless == (0,)  # type: ignore[union-attr]
    assert events([without_role[0], chunk({"role": "assistant"}), *without_role[1:]])[-1].roleless == ()  # type: ignore[union-attr]
    # per choice, and at an implicit end too (the capture ends after every choice finished)
    two = [
        chunk({"role": "assistant"}, index=0),
        chunk({"content": "hi"}, index=1),
        chunk({}, "stop", index=0),
        chunk({}, "stop", index=1),
    ]
    assert events(two)[-1].roleless == (1,)  # type: ignore[union-attr]


def test_a_new_completion_after_a_finished_one_is_a_new_message() -> None:
    stream = accumulate(
        [
            chunk(call(0, "c1", "f", "{}"), cid="chatcmpl-1"),
            chunk({}, "tool_calls", cid="chatcmpl-1"),
            chunk(call(0, "c2", "f", "{}"), cid="chatcmpl-2"),
            chunk({}, "tool_calls", cid="chatcmpl-2"),
        ],
        container="jsonl",
    )
    assert [m.message_id for m in stream.messages] == ["chatcmpl-1", "chatcmpl-2"]
    assert all(c.status == "complete" for c in stream.calls) and not stream.stream_problems


def test_an_id_that_changes_mid_completion_does_not_split_the_message() -> None:
    stream = accumulate(
        [
            chunk(call(0, "c1", "f", "{"), cid="a"),
            chunk(call(0, arguments="}"), cid="b"),
            chunk({}, "tool_calls", cid="c"),
            DONE,
        ]
    )
    assert len(stream.messages) == 1 and stream.calls[0].arguments == {}


def test_a_chunk_after_done_is_reported_not_a_new_message() -> None:
    stream = accumulate(ONE_CALL + [chunk({"content": "late"})])
    assert len(stream.messages) == 1
    assert "event-after-message-stop" in [a.kind for a in stream.stream_problems]


def test_two_choices_each_complete_at_their_own_finish_reason() -> None:
    stream = accumulate(
        [
            chunk(call(0, "a", "f", "{}"), index=0),
            chunk(call(0, "b", "f", "{"), index=1),
            chunk({}, "stop", index=0),
            chunk(call(0, arguments="}"), index=1),
            chunk({}, "tool_calls", index=1),
            DONE,
        ]
    )
    assert [(c.call_id, c.status) for c in stream.calls] == [("a", "complete"), ("b", "complete")]
    assert stream.messages[0].stop_reason == "tool_calls"  # the message takes the weightier reason
    finishes = [
        e for e in events([chunk({}, "stop", index=0), chunk({}, "tool_calls", index=1)]) if isinstance(e, Finish)
    ]
    assert len(finishes) == 2  # choice 1 appeared after choice 0 finished: the reason is restated


@pytest.mark.parametrize(
    "value",
    [
        {"error": {"message": "The server had an error", "type": "server_error", "param": None, "code": None}},
        {"error": "Input validation error", "error_type": "validation"},
        {"object": "error", "message": "max_tokens is too large", "type": "BadRequestError", "code": 400},
    ],
)
def test_error_objects_mid_stream(value: dict[str, Any]) -> None:
    produced = events([chunk({"content": "hi"}), value])
    error = next(e for e in produced if isinstance(e, StreamError))
    assert error.message and error.error_type


def test_azure_filter_chunk_opens_no_message() -> None:
    azure = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0}],
    }
    produced = events([azure, chunk({"content": "x"}, cid="chatcmpl-9"), chunk({}, "stop", cid="chatcmpl-9"), DONE])
    assert isinstance(produced[0], KeepAlive) and produced[0].what == "prompt_filter_results"
    assert [e.message_id for e in produced if isinstance(e, MessageStart)] == ["chatcmpl-9"]


def test_content_reasoning_and_refusal_are_blocks_stopped_with_the_choice() -> None:
    produced = events([chunk({"reasoning_content": "hm", "content": "ok", "refusal": "no"}), chunk({}, "stop")])
    starts = [e for e in produced if type(e).__name__ == "BlockStart"]
    assert [s.block_type for s in starts] == ["reasoning", "text", "refusal"]  # type: ignore[attr-defined]
    assert len([e for e in produced if isinstance(e, BlockStop)]) == 3


# -- robustness --------------------------------------------------------------------------------


def test_frames_the_adapter_cannot_use_are_malformed_or_unknown() -> None:
    produced = events(
        [
            [1, 2],
            {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant"}}]},
            {"id": "x", "object": "list"},
            chunk({"audio": {"id": "audio_1", "data": "UklGR"}, "brand_new_field": 1}),
            {"id": "x", "choices": [{"index": 0, "delta": "text"}]},
            {"id": "x", "choices": ["nope"]},
            chunk({"tool_calls": "nope"}),
            chunk({"tool_calls": [{"index": "0", "function": {"arguments": "{}"}}]}),
        ]
    )
    assert sum(isinstance(e, Malformed) for e in produced) == 4
    assert {e.event_type for e in produced if isinstance(e, Unknown)} == {
        "choice with message instead of delta",
        "object list",
    }
    # A field on a known event is an extension, listed once (SD006), never an unknown event (SD002).
    assert [e.message for e in produced if isinstance(e, Problem) and e.kind == "unknown-field"] == [
        "delta.brand_new_field"
    ]
    assert any(isinstance(e, Problem) and "not an integer" in e.message for e in produced)


def test_random_shapes_never_raise() -> None:
    rng = random.Random(3)
    atoms: list[Any] = [None, 0, 1, -1, "", "x", "call_1", [], {}, True, 1.5, "tool_calls", "stop", "length"]

    def shape(depth: int) -> Any:
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(atoms)
        keys = [
            "id",
            "index",
            "choices",
            "delta",
            "tool_calls",
            "function",
            "arguments",
            "name",
            "finish_reason",
            "error",
        ]
        if rng.random() < 0.3:
            return [shape(depth - 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(keys): shape(depth - 1) for _ in range(rng.randint(0, 4))}

    for _ in range(300):
        values = [shape(5) for _ in range(rng.randint(1, 6))]
        accumulate(values)
        translator = openai_chat.translator()
        list(translator.translate(frames(values)))
        translator.close()


# -- detection ---------------------------------------------------------------------------------


def test_detection_tells_openai_mistral_and_ollama_apart() -> None:
    adapter, scores = detect(frames(ONE_CALL))
    assert adapter.name == "openai" and scores["openai"] > max(s for n, s in scores.items() if n != "openai")
    mistral_chunk = {
        "id": "b3999b8c93e04e11bcbff7bcab829667",
        "object": "chat.completion.chunk",
        "created": 1769088854,
        "model": "mistral-small-latest",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
    }
    assert detect(frames([mistral_chunk]))[0].name == "mistral"
    ollama_line = {
        "model": "qwen3",
        "created_at": "2025-10-29T14:03:08Z",
        "message": {"role": "assistant", "content": ""},
        "done": False,
    }
    assert detect(frames([ollama_line]))[0].name == "ollama"
    assert openai_chat.sniff(frames([ollama_line])) == 0 and ollama.sniff(frames(ONE_CALL)) == 0
    assert mistral.sniff(frames(ONE_CALL)) == 0
    assert set(ADAPTERS) >= {"openai", "mistral", "ollama"}


def test_replay_of_a_file_end_to_end(tmp_path: Any) -> None:
    path = tmp_path / "capture.sse"
    path.write_bytes(b"".join(b"data: " + (b"[DONE]" if v is DONE else orjson.dumps(v)) + b"\n\n" for v in ONE_CALL))
    report = replay_file(str(path), Options())
    assert report.stream.capture.provider == "openai" and not report.findings
    assert report.stream.event_counts["[DONE]"] == 1
    assert isinstance(events(ONE_CALL)[1], ToolStart)


def test_a_new_id_with_the_same_name_that_continues_the_arguments_is_the_same_call() -> None:
    stream = accumulate(
        [
            chunk(call(0, "call_A", "read_file", '{"path":')),
            chunk(call(0, "call_B", "read_file", ' "a.py"}')),  # Poolside-style id change, name repeated
            chunk(call(0, "call_C", "read_file", '{"path": "b.py"}')),  # a fresh object: another call
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    assert [(c.call_id, c.arguments) for c in stream.calls] == [
        ("call_A", {"path": "a.py"}),
        ("call_C", {"path": "b.py"}),
    ]
    assert [a.kind for a in stream.stream_problems] == ["id-changed", "index-shared", "name-repeated"]
