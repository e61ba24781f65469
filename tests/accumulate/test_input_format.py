"""Accumulator capabilities the Responses and AI SDK adapters rely on: free-text input, an empty
string placeholder, a message stop that says why open calls end, and summaries that repeat the
completion event's restatement."""

from __future__ import annotations

from stream_doctor.accumulate.irregularities import FinalDiffers
from stream_doctor.values.events import ArgsDelta, BlockStop, CallSummary, MessageStart, MessageStop, ToolStart
from tests.helpers import Script


def test_free_text_input_is_kept_as_text_and_never_parsed() -> None:
    s = Script()
    s(MessageStart, "resp_1")
    s(ToolStart, 0, 0, "custom_tool_call", "call_1", "run_sql", "", input_format="text")
    s(ArgsDelta, 0, "SELECT {", "response.custom_tool_call_input.delta")
    s(ArgsDelta, 0, " 1", "response.custom_tool_call_input.delta")
    s(BlockStop, 0, "SELECT { 1")
    s(CallSummary, 0, "call_1", "run_sql", input="SELECT { 1")
    stream = s.stream(positional_indices=False)
    (call,) = stream.calls
    assert call.input_format == "text"
    assert (call.arguments, call.parse_failure, call.complete_value_at) == ("SELECT { 1", None, None)
    assert (
        call.input_source
        == 'start placeholder "" → 2 response.custom_tool_call_input.delta fragments (free text, not JSON)'
    )
    assert not stream.stream_problems


def test_free_text_restated_differently_is_final_differs() -> None:
    s = Script()
    s(MessageStart, "resp_1")
    s(ToolStart, 0, 0, "custom_tool_call", "call_1", "run_sql", "", input_format="text")
    s(ArgsDelta, 0, "SELECT 1", "response.custom_tool_call_input.delta")
    s(BlockStop, 0, "SELECT 2")
    (problem,) = s.stream(positional_indices=False).stream_problems
    assert isinstance(problem, FinalDiffers) and problem.final == "SELECT 2" and problem.streamed == "SELECT 1"


def test_an_empty_string_placeholder_is_not_input_given_whole() -> None:
    s = Script()
    s(MessageStart, "resp_1")
    s(ToolStart, 0, 0, "function_call", "call_1", "get_weather", "")
    s(BlockStop, 0)
    (call,) = s.stream(positional_indices=False).calls
    assert call.arguments == {} and call.input_source == 'start placeholder "", no deltas: empty input {}'


def test_a_message_stop_can_say_why_open_calls_end() -> None:
    s = Script()
    s(MessageStart, "m1")
    s(ToolStart, "c1", None, "tool", "c1", "createTicket")
    s(ArgsDelta, "c1", '{"title": "Chec', "tool-input-delta")
    s(MessageStop, "the step was reset")
    s(MessageStart, "m1")
    s(MessageStop)
    (call,) = s.stream(positional_indices=False).calls
    assert (call.status, call.abandon_cause) == ("abandoned", "the step was reset")


def test_a_summary_that_repeats_the_completion_event_is_not_reported_twice() -> None:
    s = Script()
    s(MessageStart, "resp_1")
    s(ToolStart, 0, 0, "function_call", "call_1", "get_weather", "")
    s(ArgsDelta, 0, '{"city":"Paris"}', "response.function_call_arguments.delta")
    s(BlockStop, 0, '{"city":"Paris, FR"}')
    s(CallSummary, 0, "call_1", "get_weather", '{"city":"Paris, FR"}')
    s(CallSummary, 0, "call_1", "get_weather", '{"city":"Lyon"}')
    kinds = [a.kind for a in s.stream(positional_indices=False).stream_problems]
    assert kinds == ["final-differs", "summary-differs"]  # only the summary that differs from both
