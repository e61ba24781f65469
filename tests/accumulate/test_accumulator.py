"""The reference accumulator: completion only on the protocol's signal, one record per call."""

from __future__ import annotations

from stream_doctor.values.events import (
    ArgsDelta,
    ArgsRun,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Execution,
    Finish,
    MessageStart,
    MessageStop,
    StreamError,
    ToolStart,
)
from tests.helpers import Script

CATEGORIES = {"tool_use": "tool_calls", "max_tokens": "length", "end_turn": "end"}


def one_call(fragments: list[str], stop: bool = True, reason: str = "tool_use") -> Script:
    s = Script()
    s(MessageStart, "msg_1")
    s(ToolStart, 0, 0, "tool_use", "toolu_A", "bash", {})
    for fragment in fragments:
        s(ArgsDelta, 0, fragment, "input_json_delta")
    if stop:
        s(BlockStop, 0)
    s(Finish, reason, CATEGORIES[reason])
    s(MessageStop)
    return s


def test_fragments_are_joined_and_parsed_at_block_stop() -> None:
    stream = one_call(["", '{"command": "in', 'stall -r requirements.txt"}']).stream()
    (call,) = stream.calls
    assert call.status == "complete"
    assert call.arguments == {"command": "install -r requirements.txt"}
    assert call.raw_arguments == '{"command": "install -r requirements.txt"}'
    assert len(call.fragments) == 3
    assert call.started.number == 2 and call.ended is not None and call.ended.number == 6
    assert call.input_source == "start placeholder {} → 3 input_json_delta fragments"


def test_empty_buffer_is_a_no_argument_call() -> None:
    (call,) = one_call([""]).stream().calls
    assert call.arguments == {} and call.parse_failure is None
    assert "no-argument" in call.input_source


def test_input_given_whole_in_start_event_is_used_when_no_delta_follows() -> None:
    s = Script()
    s(MessageStart, "msg_1")
    s(ToolStart, 0, 0, "tool_use", "toolu_A", "rollDie", {"player": "player1"})
    s(BlockStop, 0)
    (call,) = s.stream().calls
    assert call.arguments == {"player": "player1"}
    assert call.input_source == "input given whole in the start event, no deltas"


def test_a_parsable_buffer_does_not_complete_the_call() -> None:
    stream = one_call(['{"a": 1}'], stop=False, reason="max_tokens").stream()
    (call,) = stream.calls
    assert call.status == "abandoned" and call.abandon_cause == "max-tokens"


def test_another_block_starting_does_not_complete_an_interleaved_call() -> None:
    s = Script()
    s(MessageStart, "msg_1")
    s(ToolStart, 0, 0, "tool_use", "toolu_A", "a", {})
    s(ArgsDelta, 0, '{"x":', "input_json_delta")
    s(ToolStart, 1, 1, "tool_use", "toolu_B", "b", {})
    s(ArgsDelta, 1, '{"y": 2}', "input_json_delta")
    s(ArgsDelta, 0, " 1}", "input_json_delta")
    s(BlockStop, 1)
    s(BlockStop, 0)
    s(MessageStop)
    a, b = s.stream().calls
    assert a.arguments == {"x": 1} and b.arguments == {"y": 2}
    assert a.ended is not None and b.ended is not None and b.ended.number < a.ended.number


def test_parse_failures_are_classified_with_byte_and_fragment() -> None:
    cases = {
        '{"a": "x': "truncated",
        '{"a": 1}"}': "trailing-data",
        '{"a": 1}{"b": 2}': "concatenated-objects",
        '"{\\"a\\": 1}"': "not-an-object",
        '{"a": "\\q"}': "invalid",
    }
    for raw, kind in cases.items():
        (call,) = one_call([raw[:3], raw[3:]]).stream().calls
        assert call.parse_failure is not None, raw
        assert call.parse_failure.kind == kind, raw
        assert call.arguments is None
    (call,) = one_call(['{"a": 1}', '{"b": 2}']).stream().calls
    assert call.parse_failure is not None and call.parse_failure.position == 8
    assert call.parse_failure.fragment == 1
    assert call.complete_value_at == 0  # the buffer was a whole object after the first fragment


def test_byte_positions_count_utf8_bytes_not_characters() -> None:
    (call,) = one_call(['{"name": "café"} x']).stream().calls
    assert call.parse_failure is not None and call.parse_failure.position == len('{"name": "café"} '.encode())


def test_abandon_causes() -> None:
    cut = one_call(['{"a'], stop=False)
    cut.events = cut.events[:-2]  # no finish, no message_stop
    assert cut.stream().calls[0].abandon_cause == "stream-cut"

    s = Script()
    s(MessageStart, "msg_1")
    s(ToolStart, 0, 0, "tool_use", "toolu_A", "a", {})
    s(ArgsDelta, 0, '{"a', "input_json_delta")
    error = s(StreamError, "overloaded_error", "Overloaded")
    (call,) = s.stream().calls
    assert call.abandon_cause == "error-event" and call.abandon_pos == error

    s = Script()
    s(MessageStart, "msg_1")
    s(ToolStart, 0, 0, "tool_use", "toolu_A", "a", {})
    s(ArgsDelta, 0, '{"a', "input_json_delta")
    s(MessageStart, "msg_2")
    s(MessageStop)
    stream = s.stream()
    assert stream.calls[0].abandon_cause == "new-message"
    assert [a.kind for a in stream.stream_problems] == ["message-restarted"]


def test_structure_problems() -> None:
    s = Script()
    s(ArgsDelta, 5, "x", "input_json_delta")  # before any message_start, unknown block
    s(BlockStart, 0, 0, "text")
    s(BlockDelta, 0, "text_delta", 3)
    s(BlockStop, 0)
    s(BlockDelta, 0, "text_delta", 3)  # after stop
    s(ToolStart, 2, 2, "tool_use", "toolu_A", "a", {})  # skips index 1
    s(ToolStart, 3, 3, "tool_use", "toolu_A", "", {})  # duplicate id, no name
    s(BlockStart, 2, 2, "text")  # index reused
    s(Finish, "tool_use")
    s(MessageStop)
    s(BlockStop, 3)  # after message_stop
    kinds = [a.kind for a in s.stream().stream_problems]
    assert kinds == [
        "no-message-start",
        "unknown-block",
        "after-block-stop",
        "index-gap",
        "duplicate-call-id",
        "index-reused",
        "call-without-id-or-name",  # recorded when the call ends: an id or name may arrive late
        "event-after-message-stop",
    ]
    late = s.stream().calls[1]
    assert late.status == "abandoned"  # a stop after message_stop does not revive the call


def test_executions_are_resolved_against_the_state_at_that_moment() -> None:
    s = Script()
    s(MessageStart, "msg_1")
    s(ToolStart, 0, 0, "tool_use", "toolu_A", "bash", {})
    s(ArgsDelta, 0, '{"command": "in', "input_json_delta")
    s(Execution, "toolu_A", "bash", {"command": "in"})
    s(ArgsDelta, 0, 'stall"}', "input_json_delta")
    s(BlockStop, 0)
    s(Execution, "toolu_A", "bash", {"command": "install"})
    s(Execution, "toolu_Z", "bash", {})
    early, late, unknown = s.stream().executions
    assert early.call_state == "open" and early.call == 0
    assert late.call_state == "complete" and late.previous == early.pos
    assert unknown.call is None and unknown.call_state == "unknown"


def test_linear_memory_one_record_per_fragment() -> None:
    fragments = ['{"data": "'] + ["abcdefghij"] * 10_000 + ['"}']
    (call,) = one_call(fragments).stream().calls
    assert len(call.fragments) == 10_002
    assert len(call.arguments["data"]) == 100_000


def test_a_run_of_fragments_is_the_same_as_its_fragments_one_by_one() -> None:
    """``ArgsRun`` (the replay's batched fragments) into an open call, after its stop, on an unknown
    index and before any message: the same calls and stream problems as the ArgsDelta events it stands for."""
    s = Script()
    s(ArgsDelta, 3, "before", "input_json_delta")
    s(MessageStart, "msg_1")
    s(ToolStart, 0, 0, "tool_use", "toolu_A", "bash", {})
    for fragment in ["{", '"a": 1', "}"]:
        s(ArgsDelta, 0, fragment, "input_json_delta")
    s(BlockStop, 0)
    for key, fragment in [(0, "late"), (0, "later"), (7, "x"), (7, "y")]:
        s(ArgsDelta, key, fragment, "input_json_delta")
    s(MessageStop)
    one_by_one = s.stream()
    runs: list[Event] = []
    for event in s.events:
        last = runs[-1] if runs else None
        if type(event) is ArgsDelta and type(last) is ArgsRun and last.key == event.key:
            last.positions.append(event.pos)
            last.fragments.append(event.fragment)
        elif type(event) is ArgsDelta:
            runs.append(ArgsRun(event.key, [event.pos], [event.fragment], event.delta_type))
        else:
            runs.append(event)
    assert len(runs) == 8
    s.events = runs
    batched = s.stream()
    assert batched.calls == one_by_one.calls and batched.calls[0].arguments == {"a": 1}
    assert batched.stream_problems == one_by_one.stream_problems and len(one_by_one.stream_problems) >= 3


def test_every_event_type_has_its_handler() -> None:
    """Every event but an argument fragment goes to its handler by its type (``_HANDLERS``): an event type
    added without one would stop a replay, so each is listed, and only those."""
    from typing import get_args

    from stream_doctor.accumulate.accumulator import _HANDLERS

    assert set(_HANDLERS) == set(get_args(Event)) - {ArgsDelta, ArgsRun}
