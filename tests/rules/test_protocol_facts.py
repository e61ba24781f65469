"""Rules take a provider's protocol facts from the capture's information: a new provider states
its facts once, in its adapter, and every rule speaks its words without an edit."""

from __future__ import annotations

import re
from dataclasses import fields, replace

import pytest

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.engine.pipeline import replay
from stream_doctor.providers import ADAPTERS, anthropic
from stream_doctor.rules import lookup
from stream_doctor.values.events import ArgsDelta, BlockStart, BlockStop, Finish, MessageStart, MessageStop, ToolStart
from stream_doctor.values.findings import Finding
from stream_doctor.values.options import Options
from stream_doctor.values.protocol import NEUTRAL_WORDS, EventWords, ProtocolFacts
from tests.helpers import Script

INVENTED = EventWords(
    message_start="hello-event",
    call_start="tool-begin",
    fragment="tool-piece",
    call_end="a tool-done event",
    stream_end="event: goodbye",
    stop_reason="why_stopped",
)

#: A wire name in a sentence: snake_case, dotted, kebab-case or camelCase identifiers, and [DONE].
WIRE_NAME = re.compile(r"\[DONE\]|[A-Za-z]+(?:[_.\-][A-Za-z]+)+|[a-z]+[A-Z][A-Za-z]*")


def wire_names(text: str) -> set[str]:
    return set(WIRE_NAME.findall(text))


def names_of(words: EventWords) -> set[str]:
    return {name for field in fields(words) for name in wire_names(getattr(words, field.name))}


def foreign_names(provider: str) -> set[str]:
    """Every event name another provider's adapter declares, less those this provider shares."""
    own = names_of(ADAPTERS[provider].protocol.words)
    return {name for other in ADAPTERS for name in names_of(ADAPTERS[other].protocol.words)} - own


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
    (anthropic_words,) = messages("SD303", anthropic.protocol)
    (invented,) = messages("SD303", ProtocolFacts(INVENTED))
    assert anthropic_words.endswith("without message_stop")
    assert invented.endswith("without event: goodbye")


def test_an_abandoned_call_names_the_protocols_call_completion() -> None:
    (anthropic_words,) = messages("SD301", anthropic.protocol)
    (invented,) = messages("SD301", ProtocolFacts(INVENTED))
    assert "the stream ended before content_block_stop" in anthropic_words
    assert "the stream ended before a tool-done event" in invented


def test_a_stream_built_without_an_adapter_names_no_providers_events() -> None:
    stream = cut_call().stream(protocol=ProtocolFacts(NEUTRAL_WORDS))
    said = " ".join(text for code in ("SD301", "SD303") for f in check(code, stream) for text in (f.message, f.hint))
    declared = {name for provider in ADAPTERS for name in names_of(ADAPTERS[provider].protocol.words)}
    assert "the call's completion event" in said and not wire_names(said) & declared


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
    assert list(rule.check(s.stream(protocol=anthropic.protocol), rule)) == []
    (finding,) = rule.check(s.stream(protocol=replace(anthropic.protocol, finish_with_calls="STOP")), rule)
    assert "finishReason STOP" in finding.message


# -- every provider's words ------------------------------------------------------------------------


def test_every_adapter_states_its_own_event_words() -> None:
    for name in ADAPTERS:
        words = ADAPTERS[name].protocol.words
        assert words != NEUTRAL_WORDS, name
        assert all(getattr(words, field.name).strip() for field in fields(words)), name
        assert names_of(words), f"{name} declares no wire name the tests can look for"


def test_the_foreign_names_are_what_the_adapters_declare() -> None:
    assert {"input_json_delta", "content_block_stop", "message_stop"} <= foreign_names("openai")
    assert {"tool_calls", "function.arguments", "[DONE]", "finish_reason"} <= foreign_names("anthropic")
    assert "finish_reason" not in foreign_names("cohere")  # Cohere's message-end carries one too


#: One capture per provider whose first call carried a non-empty input: told it ran with {}, SD102 fires.
ONE_CALL = {
    "anthropic": "anthropic/one_call.sse",
    "anthropic-sdk": "anthropic/sdk_helper_one_call.jsonl",
    "bedrock": "bedrock/converse_one_call.jsonl",
    "cohere": "cohere/parallel_calls.jsonl",
    "gemini": "gemini/one_call.sse",
    "gemini-interactions": "gemini/interactions_one_call.sse",
    "mistral": "mistral/one_call.sse",
    "ollama": "ollama/one_call.jsonl",
    "openai": "openai/one_call.sse",
    "openai-assistants": "openai-assistants/run_requires_action.sse",
    "openai-responses": "openai-responses/one_call.sse",
    "openai-sdk": "openai/sdk_helper_one_call.jsonl",
    "vercel-ai": "vercel-ai/parallel_client_calls.sse",
    "vercel-ai-data": "vercel-ai/data_stream_v4_one_call.txt",
}


def test_every_provider_has_a_one_call_capture() -> None:
    assert sorted(ONE_CALL) == sorted(ADAPTERS)


def check(code: str, stream: AccumulatedStream) -> list[Finding]:
    rule = lookup(code)
    assert rule is not None
    return list(rule.check(stream, rule))


@pytest.mark.parametrize("provider", sorted(ONE_CALL))
def test_the_empty_input_hint_names_only_the_captures_own_events(provider: str) -> None:
    report = replay(f"fixtures/{ONE_CALL[provider]}", Options(executed=("1={}",)))
    assert report.stream.capture.provider == provider
    (finding,) = [f for f in report.findings if f.code == "SD102"]
    words = report.stream.capture.protocol.words
    assert words.fragment in finding.hint and words.call_end in finding.hint
    assert not wire_names(finding.hint) & foreign_names(provider), finding.hint
    assert not wire_names(finding.message) & foreign_names(provider), finding.message


def structure_defects() -> Script:
    """One stream with a defect for each rule below that names the provider's events."""
    s = Script()
    s(ToolStart, 0, 0, "tool_use", "call_1", "search")  # no message start: SD408
    s(ArgsDelta, 0, '{"q": 1}', "arguments")
    s(BlockStop, 0)
    s(ArgsDelta, 0, "}", "arguments")  # after the call ended: SD402
    s(BlockStart, 1, 1, "text")
    s(ArgsDelta, 1, '{"x"', "arguments")  # argument text for a text block: SD410
    s(Finish, "tool_use", "tool_calls")
    s(Finish, "end_turn", "end")  # a second, different stop reason: SD411
    s(MessageStop)
    s(MessageStart, "m2", "model")
    s(ToolStart, 0, 0, "tool_use", "call_2", "search")
    s(MessageStart, "m3", "model")  # while m2 is open: SD409
    s(ArgsDelta, 0, '{"q": 2}', "arguments")
    s(BlockStop, 0)
    s(Finish, "tool_use", "tool_calls")
    s(MessageStop)
    s(ArgsDelta, 0, "}", "arguments")  # after the end of the stream: SD407
    return s


#: The rules whose sentences take the provider's event names, and the stream that makes each fire.
WORDED = {
    "SD301": cut_call,
    "SD303": cut_call,
    "SD402": structure_defects,
    "SD407": structure_defects,
    "SD408": structure_defects,
    "SD409": structure_defects,
    "SD410": structure_defects,
    "SD411": structure_defects,
}


@pytest.mark.parametrize("provider", sorted(ADAPTERS))
@pytest.mark.parametrize("code", sorted(WORDED))
def test_each_worded_rule_names_only_the_providers_own_events(code: str, provider: str) -> None:
    protocol = ADAPTERS[provider].protocol
    found = check(code, WORDED[code]().stream(protocol=protocol))
    assert found, f"{code} did not fire"
    said = " ".join(text for f in found for text in (f.message, f.hint))
    assert any(getattr(protocol.words, field.name) in said for field in fields(protocol.words))
    assert not wire_names(said) & foreign_names(provider), said
