"""Accumulator capabilities the non-Anthropic providers rely on: identity on fragments, final
arguments at completion, summaries that restate calls, fragments with no correlator."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from stream_doctor.accumulate.irregularities import IdRepeated, NameRepeated, UncorrelatedFragment
from stream_doctor.values.events import (
    MISSING,
    ArgsDelta,
    BlockStop,
    CallSummary,
    Finish,
    MessageStart,
    MessageStop,
    ToolStart,
)
from tests.helpers import Script


def openai_like() -> Script:
    s = Script()
    s(MessageStart, "chatcmpl-1")
    return s


def kinds(s: Script, positional: bool = False) -> list[str]:
    return [a.kind for a in s.stream(positional_indices=positional).stream_problems]


def test_repeated_id_and_name_are_counted_not_concatenated() -> None:
    s = openai_like()
    s(ToolStart, (0, 0), 0, "function", "call_abc", "get_weather", None)
    s(ArgsDelta, (0, 0), '{"city":', "arguments", "call_abc", "get_weather")
    s(ArgsDelta, (0, 0), ' "Paris"}', "arguments", "call_abc", "get_weather")
    s(BlockStop, (0, 0))
    stream = s.stream(positional_indices=False)
    (call,) = stream.calls
    assert call.call_id == "call_abc" and call.name == "get_weather"
    assert call.arguments == {"city": "Paris"}
    assert stream.stream_problems == (
        IdRepeated(stream.calls[0].started, 0, 0, "call_abc", 3),
        NameRepeated(stream.calls[0].started, 0, 0, "get_weather", 3),
    )


def test_id_that_changes_name_that_arrives_late_or_blank() -> None:
    s = openai_like()
    s(ToolStart, 0, 0, "function", "call_1", None, None)
    s(ArgsDelta, 0, "{", "arguments", None, "search")
    s(ArgsDelta, 0, "}", "arguments", "call_2", "")
    s(BlockStop, 0)
    assert kinds(s) == ["name-late", "id-changed", "name-blank"]
    assert s.stream(positional_indices=False).calls[0].name == "search"


def test_fragment_without_correlator_goes_to_the_latest_open_call_and_is_recorded() -> None:
    s = openai_like()
    s(ToolStart, 0, 0, "function", "call_1", "a", None)
    s(ArgsDelta, None, '{"x": 1}', "arguments")
    s(BlockStop, 0)
    stream = s.stream(positional_indices=False)
    assert stream.calls[0].arguments == {"x": 1}
    (problem,) = stream.stream_problems
    assert isinstance(problem, UncorrelatedFragment) and problem.attributed == 0 and problem.text == '{"x": 1}'


def test_final_arguments_fill_an_empty_buffer_and_are_checked_against_fragments() -> None:
    s = openai_like()
    s(ToolStart, "fc_1", 0, "function_call", "call_1", "weather", None)
    s(BlockStop, "fc_1", '{"city": "Oslo"}')
    (call,) = s.stream(positional_indices=False).calls
    assert call.arguments == {"city": "Oslo"}
    assert call.input_source == "arguments given whole in the completion event, no deltas"

    s = openai_like()
    s(ToolStart, "fc_1", 0, "function_call", "call_1", "weather", None)
    s(ArgsDelta, "fc_1", '{"city": "Os', "function_call_arguments.delta")
    s(BlockStop, "fc_1", '{"city": "Oslo"}')
    stream = s.stream(positional_indices=False)
    assert [a.kind for a in stream.stream_problems] == ["final-differs"]
    assert stream.calls[0].parse_failure is not None  # the reference keeps what streamed


def test_summaries_match_differ_or_duplicate() -> None:
    s = openai_like()
    s(ToolStart, "fc_1", 0, "function_call", "call_1", "weather", None)
    s(ArgsDelta, "fc_1", '{"city": "Oslo"}', "function_call_arguments.delta")
    s(BlockStop, "fc_1")
    s(CallSummary, "fc_1", "call_1", "weather", '{"city": "Oslo"}')  # agrees: nothing to say
    s(CallSummary, "fc_9", "call_9", "weather", '{"city":"Oslo"}')  # same call, another id
    s(CallSummary, "fc_1", "call_1", "weather", '{"city": "Bergen"}')
    s(CallSummary, "fc_7", "call_7", "time", "{}")
    s(Finish, "completed")
    s(MessageStop)
    assert kinds(s) == ["summary-duplicate", "summary-differs", "summary-only-call"]


def test_two_open_calls_on_one_index() -> None:
    s = openai_like()
    s(ToolStart, "call_1", 0, "function", "call_1", "a", None)
    s(ToolStart, "call_2", 0, "function", "call_2", "b", None)
    s(BlockStop, "call_1")
    s(BlockStop, "call_2")
    assert kinds(s) == ["index-shared"]
    assert kinds(s, positional=True) == ["index-gap"]  # (Anthropic: positions)


#: Argument texts a summary may restate: JSON, the same value spelled otherwise, blank, not JSON.
_TEXTS = ['{"city": "Oslo"}', '{"city":"Oslo"}', '{"city": "Bergen"}', "", "  ", "{}", '{"city": "Os', "[1]", "1"]


@given(streamed=st.sampled_from(_TEXTS), restated=st.sampled_from(_TEXTS), same_name=st.booleans())
def test_a_summary_differs_exactly_when_its_parsed_value_does(streamed: str, restated: str, same_name: bool) -> None:
    """A summary that restates the streamed text itself is taken as agreeing without a parse; the
    finding must be the one a parse of both texts gives, for every pair of texts."""
    s = openai_like()
    s(ToolStart, "fc_1", 0, "function_call", "call_1", "weather", None)
    s(ArgsDelta, "fc_1", streamed, "function_call_arguments.delta")
    s(BlockStop, "fc_1")
    s(CallSummary, "fc_1", "call_1", "weather" if same_name else "time", restated)
    s(Finish, "completed")
    s(MessageStop)

    def value(text: str) -> object:
        try:
            return orjson.loads(text) if text.strip() else {}
        except orjson.JSONDecodeError:
            return MISSING

    stream = s.stream(positional_indices=False)
    restated_value = value(restated)
    differs = not same_name or (restated_value is not MISSING and restated_value != stream.calls[0].arguments)
    summaries = [a.kind for a in stream.stream_problems if a.kind.startswith("summary")]
    assert summaries == (["summary-differs"] if differs else [])
