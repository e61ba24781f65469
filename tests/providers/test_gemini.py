"""The Gemini / Vertex AI adapter and the Gemini Interactions API adapter."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.providers import anthropic, gemini, gemini_interactions
from stream_doctor.providers.gemini_partial_args import StreamedArguments, parse_path
from stream_doctor.values.events import BlockStop, Event, Finish, KeepAlive, Malformed, Problem, ToolStart, Unknown
from tests.helpers import accumulated


def frames(values: list[Any]) -> list[Frame]:
    out = []
    for number, value in enumerate(values, 1):
        data = orjson.dumps(value) if value is not NOT_JSON else b"{"
        out.append(Frame(Pos(number, number, number * 100), data, value, None if value is not NOT_JSON else "bad"))
    return out


def events(values: list[Any], adapter: Any = gemini) -> list[Event]:
    translator = adapter.translator()
    out = [e for f in frames(values) for e in translator.feed(f)]
    return out + translator.close()


def replay(values: list[Any], adapter: Any = gemini) -> AccumulatedStream:
    return accumulated(adapter, frames(values))


def chunk(*parts: dict[str, Any], finish: str | None = None, response_id: str = "r1") -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-3-flash-preview", "responseId": response_id}


def call(name: str, args: Any = None, **extra: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if args is not None:
        function["args"] = args
    return {"functionCall": {**function, **extra}}


def streamed(pieces: list[dict[str, Any]] | None = None, more: bool = True, **extra: Any) -> dict[str, Any]:
    function: dict[str, Any] = dict(extra)
    if pieces is not None:
        function["partialArgs"] = pieces
    if more:
        function["willContinue"] = True
    return {"functionCall": function}


def problems(stream: AccumulatedStream, kind: str) -> list[str]:
    return [p.message for p in stream.problems if p.kind == kind]


# -- whole calls ---------------------------------------------------------------------------------


def test_a_whole_call_starts_and_completes_at_its_part() -> None:
    produced = events([chunk(call("get_weather", {"city": "Paris"}), finish="STOP")])
    start = next(e for e in produced if isinstance(e, ToolStart))
    stop = next(e for e in produced if isinstance(e, BlockStop) and e.key == start.key)
    assert start.name == "get_weather" and start.call_id is None and start.id_optional
    assert stop.final_input == {"city": "Paris"} and stop.final_arguments == '{"city":"Paris"}'


def test_no_args_key_is_an_empty_object_and_the_id_is_kept() -> None:
    stream = replay([chunk(call("list_tickets", id="a1b2c3d4"), finish="STOP")])
    (only,) = stream.calls
    assert only.arguments == {} and only.call_id == "a1b2c3d4" and only.status == "complete"
    assert stream.stream_problems == ()


def test_parallel_calls_of_one_name_are_never_merged() -> None:
    stream = replay(
        [
            chunk(call("get_weather", {"city": "Boston"})),
            chunk(call("get_weather", {"city": "Denver"}), call("get_time", {"tz": "MST"})),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    assert [(c.name, c.arguments) for c in stream.calls] == [
        ("get_weather", {"city": "Boston"}),
        ("get_weather", {"city": "Denver"}),
        ("get_time", {"tz": "MST"}),
    ]
    assert [c.index for c in stream.calls] == [0, 1, 2]
    assert stream.stream_problems == ()


@pytest.mark.parametrize(
    ("reason", "with_call", "category"),
    [
        ("STOP", True, "tool_calls"),
        ("STOP", False, "end"),
        ("MAX_TOKENS", False, "length"),
        ("SAFETY", False, "filter"),
        ("MALFORMED_FUNCTION_CALL", False, "error"),
        ("SOMETHING_NEW", False, "other"),
    ],
)
def test_finish_reasons(reason: str, with_call: bool, category: str) -> None:
    parts = [call("f", {})] if with_call else [{"text": "hi"}]
    finishes = [e for e in events([chunk(*parts, finish=reason)]) if isinstance(e, Finish)]
    assert [(f.reason, f.category) for f in finishes] == [(reason, category)]


def test_a_rejected_call_and_a_blocked_prompt_are_problems() -> None:
    rejected = {
        "candidates": [
            {"content": {"parts": [], "role": "model"}, "finishReason": "UNEXPECTED_TOOL_CALL", "finishMessage": "no"}
        ],
        "responseId": "r",
    }
    assert problems(replay([rejected]), "tool-call-rejected")
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}}
    stream = replay([blocked])
    assert problems(stream, "prompt-blocked") and stream.messages[0].stop_category == "filter"
    assert stream.messages[0].stopped is not None


def test_the_stream_ends_only_after_a_finish_reason() -> None:
    assert replay([chunk({"text": "hi"}, finish="STOP")]).messages[0].stopped is not None
    assert replay([chunk({"text": "hi"})]).messages[0].stopped is None


def test_a_new_response_id_starts_a_new_message() -> None:
    stream = replay([chunk({"text": "a"}), chunk({"text": "b"}, finish="STOP", response_id="r2")])
    assert [m.message_id for m in stream.messages] == ["r1", "r2"]
    assert [a.kind for a in stream.stream_problems] == ["message-restarted"]


def test_frames_it_cannot_use() -> None:
    produced = events([NOT_JSON, [1, 2], {"candidates": "x", "responseId": "r"}, chunk({"weird": 1})])
    assert [type(e) for e in produced if isinstance(e, (Malformed, Unknown))] == [
        Malformed,
        Malformed,
        Malformed,
        Unknown,
    ]
    assert any(isinstance(e, KeepAlive) for e in events([{"usageMetadata": {}, "modelVersion": "m"}]))


# -- streamed arguments (Vertex) -----------------------------------------------------------------


def s(path: str, value: str, more: bool = False) -> dict[str, Any]:
    piece: dict[str, Any] = {"jsonPath": path, "stringValue": value}
    if more:
        piece["willContinue"] = True
    return piece


def test_streamed_arguments_are_rebuilt_by_path() -> None:
    stream = replay(
        [
            chunk(streamed(name="cook")),
            chunk(streamed([s("$.recipe.ingredients[0].name", 'Egg "large"', True)])),
            chunk(streamed([s("$.recipe.ingredients[0].name", "s")])),
            chunk(streamed([{"jsonPath": "$.recipe.ingredients[0].count", "numberValue": 2}])),
            chunk(streamed()),
            chunk(streamed([s("$.recipe.ingredients[1].name", "Salt")])),
            chunk(streamed([{"jsonPath": "$.recipe['serves people']", "numberValue": 4.5}])),
            chunk(
                streamed(
                    [{"jsonPath": "$.vegan", "boolValue": False}, {"jsonPath": "$.note", "nullValue": "NULL_VALUE"}]
                )
            ),
            chunk({"functionCall": {}}),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    (cooked,) = stream.calls
    assert cooked.status == "complete" and cooked.parse_failure is None
    assert cooked.arguments == {
        "recipe": {"ingredients": [{"name": 'Egg "large"s', "count": 2}, {"name": "Salt"}], "serves people": 4.5},
        "vegan": False,
        "note": None,
    }
    # Each fragment is only what its piece added: the joined text is the arguments, written once.
    assert "".join(cooked.fragment_texts) == cooked.raw_arguments
    assert problems(stream, "partial-args-unplaceable") == []
    assert problems(stream, "missing-terminal-function-call") == []
    assert len(problems(stream, "partial-args-string-split")) == 1


def test_a_part_without_will_continue_ends_the_call() -> None:
    stream = replay(
        [
            chunk(streamed(name="write")),
            chunk(streamed([s("$.a", "x", True)])),
            chunk(streamed([s("$.a", "")])),
            chunk(streamed([{"jsonPath": "$.n", "numberValue": 1}], more=False)),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    assert stream.calls[0].status == "complete" and stream.calls[0].arguments == {"a": "x", "n": 1}
    assert problems(stream, "missing-terminal-function-call")


def test_a_streamed_call_that_never_ends_is_abandoned() -> None:
    stream = replay([chunk(streamed(name="write")), chunk(streamed([s("$.a", "x", True)])), chunk(finish="STOP")])
    assert stream.calls[0].status == "abandoned" and stream.calls[0].raw_arguments == '{"a":"x'


def test_a_continuation_with_no_open_call_is_reported() -> None:
    stream = replay([chunk(streamed([s("$.a", "x")])), chunk({"functionCall": {}}, finish="STOP")])
    assert len(problems(stream, "partial-args-unplaceable")) == 2 and stream.calls == ()


def test_pieces_that_cannot_be_placed() -> None:
    args = StreamedArguments()
    text = args.place({"jsonPath": "$.a[0]", "numberValue": 1}) + args.place({"jsonPath": "$.b", "numberValue": 2})
    text += args.place({"jsonPath": "$.a[1]", "numberValue": 3})  # $.a was left: not reopened
    text += args.place({"jsonPath": "$.c", "stringValue": "x", "numberValue": 1})  # two values
    text += args.place({"jsonPath": "c", "stringValue": "x"})  # not a path
    text += args.place({"jsonPath": "$.d[2]", "boolValue": True})  # skips elements 0-1
    text += args.place({"jsonPath": "$.e", "stringValue": "open", "willContinue": True})
    text += args.finish()  # the string said willContinue
    assert orjson.loads(text) == {"a": [1], "b": 2, "d": [None, None, True], "e": "open"}
    assert len(args.problems) == 5


def test_parse_path() -> None:
    assert parse_path("$.recipe.steps[0]") == ("recipe", "steps", 0)
    assert parse_path("$['a b'][\"c\"]") == ("a b", "c")
    assert parse_path("$") == ()
    assert parse_path("recipe") is None and parse_path("$.a[x]") is None


def test_thought_signature_on_the_first_call_only_and_missing_on_the_first() -> None:
    signed = {"thoughtSignature": "c2ln"}
    first_only = replay([chunk({**call("a", {}), **signed}, call("b", {}), finish="STOP")])
    assert problems(first_only, "thought-signature-first-only")
    second_only = replay([chunk(call("a", {}), {**call("b", {}), **signed}, finish="STOP")])
    assert problems(second_only, "thought-signature-missing")
    unsigned = replay([chunk(call("a", {}), call("b", {}), finish="STOP")])
    assert not [p for p in unsigned.problems if p.kind.startswith("thought-signature")]


def test_the_hot_path_and_the_checked_path_agree() -> None:
    values = [chunk(streamed(name="w")), chunk(streamed([s("$.a", "x", True)])), chunk(streamed([s("$.a", "y")]))]
    translator = gemini.translator()
    hot = [e for f in frames(values) for e in translator.feed(f)]
    checked_translator = gemini.translator()
    checked = [e for f in frames(values) for e in checked_translator._feed(f)]
    assert [(type(e), getattr(e, "fragment", None)) for e in hot] == [
        (type(e), getattr(e, "fragment", None)) for e in checked
    ]


def test_sniff_tells_gemini_from_other_providers() -> None:
    gemini_frames = frames([chunk({"text": "hi"}, finish="STOP")])
    anthropic_frames = frames([{"type": "message_start", "message": {}}])
    openai_frames = frames([{"object": "chat.completion.chunk", "choices": []}])
    assert gemini.sniff(gemini_frames) > 50
    assert gemini.sniff(anthropic_frames) == gemini.sniff(openai_frames) == 0
    assert anthropic.sniff(gemini_frames) == 0


# -- the Interactions API --------------------------------------------------------------------------


def test_interactions_function_call_step() -> None:
    values = [
        {
            "interaction": {"id": "v1_x", "status": "in_progress", "model": "gemini-2.5-flash"},
            "event_type": "interaction.created",
        },
        {
            "index": 0,
            "step": {"id": "k3", "type": "function_call", "name": "f", "arguments": {}},
            "event_type": "step.start",
        },
        {"index": 0, "delta": {"partial_arguments": '{"a":', "type": "arguments_delta"}, "event_type": "step.delta"},
        {"index": 0, "delta": {"arguments": "1}", "type": "arguments_delta"}, "event_type": "step.delta"},
        {"index": 0, "event_type": "step.stop"},
        {"interaction": {"id": "v1_x", "status": "requires_action"}, "event_type": "interaction.completed"},
    ]
    stream = replay(values, gemini_interactions)
    (only,) = stream.calls
    assert (only.call_id, only.name, only.arguments) == ("k3", "f", {"a": 1})
    assert stream.messages[0].stop_category == "tool_calls" and stream.stream_problems == ()
    assert gemini_interactions.sniff(frames(values)) == 100 and gemini.sniff(frames(values)) == 0


def test_interactions_unknown_event_and_error() -> None:
    produced = events(
        [{"event_type": "step.teleport"}, {"event_type": "error", "error": {"message": "x"}}], gemini_interactions
    )
    assert isinstance(produced[0], Unknown) and type(produced[1]).__name__ == "StreamError"
    assert not [e for e in produced if isinstance(e, Problem)]
