"""Rules take a provider's protocol facts from the capture's information: a new provider states
its facts once, in its adapter, and every rule speaks its words without an edit."""

from __future__ import annotations

from stream_doctor.events import ArgsDelta, BlockStop, Finish, MessageStart, MessageStop, ToolStart
from stream_doctor.protocol import ProtocolFacts
from stream_doctor.rules import lookup
from tests.helpers import Script


def cut_call() -> Script:
    s = Script()
    s(MessageStart, "m1", "model")
    s(ToolStart, 0, 0, "function", "call_1", "search")
    s(ArgsDelta, 0, '{"q": "caf', "arguments")
    return s


def messages(code: str, protocol: ProtocolFacts) -> list[str]:
    rule = lookup(code)
    assert rule is not None
    stream = cut_call().stream(protocol=protocol)
    return [f.message for f in rule.check(stream, rule)]


def test_the_stream_cut_names_the_protocols_own_end_of_stream() -> None:
    (anthropic,) = messages("SD303", ProtocolFacts())
    (invented,) = messages("SD303", ProtocolFacts(end_of_stream="event: goodbye"))
    assert anthropic.endswith("without message_stop")
    assert invented.endswith("without event: goodbye")


def test_an_abandoned_call_names_the_protocols_call_completion() -> None:
    (generic,) = messages("SD301", ProtocolFacts())
    (named,) = messages("SD301", ProtocolFacts(call_completion="a tool-done event"))
    assert "the stream ended with no completion event" in generic
    assert "the stream ended before a tool-done event" in named


def test_stop_with_calls_is_explained_only_where_the_protocol_ends_calls_that_way() -> None:
    s = Script()
    s(MessageStart, "m1", "model")
    s(ToolStart, 0, 0, "function", "call_1", "search")
    s(ArgsDelta, 0, '{"q": 1}', "arguments")
    s(BlockStop, 0)
    s(Finish, "STOP", "end")
    s(MessageStop)
    rule = lookup("SD525")
    assert rule is not None
    assert list(rule.check(s.stream(protocol=ProtocolFacts()), rule)) == []
    (finding,) = rule.check(s.stream(protocol=ProtocolFacts(finish_with_calls="STOP")), rule)
    assert "finishReason STOP" in finding.message
