"""``ToolStart.id_optional``: a protocol whose call id is optional (Gemini ``FunctionCall.id``)."""

from __future__ import annotations

from stream_doctor.values.events import BlockStop, Finish, MessageStart, MessageStop, ToolStart
from tests.helpers import Script


def gemini_like(id_optional: bool, call_id: str | None = None, name: str | None = "get_weather") -> Script:
    s = Script()
    s(MessageStart, "resp-1", "gemini-2.0-flash")
    s(ToolStart, 0, 0, "functionCall", call_id, name, None, id_optional=id_optional)
    s(BlockStop, 0, final_arguments='{"city":"Boston"}', final_input={"city": "Boston"})
    s(Finish, "STOP", "tool_calls")
    s(MessageStop)
    return s


def test_a_call_without_id_is_a_stream_problem_by_default() -> None:
    stream = gemini_like(id_optional=False).stream(positional_indices=False)
    assert [a.kind for a in stream.stream_problems] == ["call-without-id-or-name"]


def test_no_stream_problem_when_the_protocol_makes_the_id_optional() -> None:
    stream = gemini_like(id_optional=True).stream(positional_indices=False)
    assert stream.stream_problems == ()
    (call,) = stream.calls
    assert call.call_id is None and call.arguments == {"city": "Boston"}


def test_a_missing_name_is_still_a_stream_problem_when_the_id_is_optional() -> None:
    stream = gemini_like(id_optional=True, name=None).stream(positional_indices=False)
    assert [a.kind for a in stream.stream_problems] == ["call-without-id-or-name"]


def test_an_optional_id_that_is_present_is_kept() -> None:
    stream = gemini_like(id_optional=True, call_id="r4k2x9qa").stream(positional_indices=False)
    assert stream.calls[0].call_id == "r4k2x9qa" and stream.stream_problems == ()
