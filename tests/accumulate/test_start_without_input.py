"""A call whose start carried no input at all (OpenAI Chat: the first fragment is the start) is
described by its fragments alone, not as a placeholder that was replaced."""

from __future__ import annotations

from stream_doctor.values.events import ArgsDelta, BlockStop, MessageStart, ToolStart
from tests.helpers import Script


def test_input_source_without_a_start_input() -> None:
    s = Script()
    s(MessageStart, "chatcmpl-1")
    s(ToolStart, (0, 0), 0, "function", "call_1", "a", None)
    s(ArgsDelta, (0, 0), '{"x":', "function.arguments")
    s(ArgsDelta, (0, 0), " 1}", "function.arguments")
    s(BlockStop, (0, 0))
    s(ToolStart, (0, 1), 1, "function", "call_2", "b", None)
    s(ArgsDelta, (0, 1), "", "function.arguments")
    s(BlockStop, (0, 1))
    s(ToolStart, (0, 2), 2, "function", "call_3", "c", None)
    s(BlockStop, (0, 2))
    sources = [c.input_source for c in s.stream(positional_indices=False).calls]
    assert sources == [
        "2 function.arguments fragments",
        "1 empty function.arguments fragment: no-argument call {}",
        "no deltas: empty input {}",
    ]


def test_an_anthropic_placeholder_is_still_named() -> None:
    s = Script()
    s(MessageStart, "msg_1")
    s(ToolStart, 0, 0, "tool_use", "toolu_1", "a", {})
    s(ArgsDelta, 0, '{"x": 1}', "input_json_delta")
    s(BlockStop, 0)
    assert s.stream().calls[0].input_source == "start placeholder {} → 1 input_json_delta fragment"
