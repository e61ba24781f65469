"""``serve.matching`` over the neighbours of a recorded request (hypothesis): what the answer depends on
(model, tool set, user messages, results for calls never made) always refuses; what it does not (any
other field) is noted and served; what the application sends back about its calls (their inputs, their
results' content) never refuses."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stream_doctor.serve.load import load_script
from stream_doctor.serve.matching import Difference, compare
from stream_doctor.util.jsontext import equal
from tests.conftest import FIXTURES

ANTHROPIC = load_script(str(FIXTURES / "conversations/anthropic_echo_empty_input.yaml")).turns[1].request
OPENAI = load_script(str(FIXTURES / "conversations/openai_gzip_two_turns.yaml")).turns[1].request
assert ANTHROPIC is not None and OPENAI is not None
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
CASES = st.sampled_from([("anthropic", ANTHROPIC), ("openai", OPENAI)])


def body(recorded: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(recorded["body"])


@pytest.mark.slow  # hypothesis: 150 bodies with a field of any JSON value added (4 s of CPU)
@SETTINGS
@given(
    CASES,
    st.one_of(
        st.just("stream"), st.text(min_size=1, max_size=12).filter(lambda k: k not in ("model", "tools", "messages"))
    ),
    JSON,
)
def test_a_field_the_answer_does_not_depend_on_is_noted_never_refused(case: Any, key: str, value: Any) -> None:
    provider, recorded = case
    assume(key != "stream" or value not in (False, None))  # asks for no stream: refused (the test below)
    changed = {**body(recorded), key: value}
    found = compare(provider, recorded, changed)
    assert found.refused == ()
    differs = not equal(recorded["body"].get(key), value)  # as JSON: 1 is not true
    assert [line.startswith(f"{key} differs") for line in found.noted] == ([True] if differs else [])


@SETTINGS
@given(CASES, st.text(max_size=30))
def test_another_model_or_user_message_is_refused(case: Any, text: Any) -> None:
    provider, recorded = case
    model = {**body(recorded), "model": recorded["body"]["model"] + text + "x"}
    assert any(line.startswith("model ") for line in compare(provider, recorded, model).refused)
    asked = body(recorded)
    asked["messages"][0]["content"] = recorded["body"]["messages"][0]["content"] + text + "?"
    assert any(line.startswith("user messages ") for line in compare(provider, recorded, asked).refused)
    assert compare(provider, recorded, body(recorded)).refused == ()  # the near miss: the request itself


@SETTINGS
@given(st.dictionaries(st.text(max_size=8), JSON, max_size=3), st.text(max_size=40))
def test_what_the_application_sends_back_about_its_calls_never_refuses(arguments: Any, result: str) -> None:
    anthropic = body(ANTHROPIC)
    anthropic["messages"][1]["content"][1]["input"] = arguments  # the call's input, echoed
    anthropic["messages"][2]["content"][0]["content"] = result  # the tool's result
    assert compare("anthropic", ANTHROPIC, anthropic).refused == ()
    openai = body(OPENAI)
    openai["messages"][1]["tool_calls"][0]["function"]["arguments"] = repr(arguments)
    openai["messages"][2]["content"] = result
    assert compare("openai", OPENAI, openai).refused == ()


@SETTINGS
@given(CASES, st.text(min_size=1, max_size=16))
def test_another_tool_set_or_a_result_for_a_call_never_made_is_refused(case: Any, suffix: str) -> None:
    provider, recorded = case
    tools = body(recorded)
    extra = copy.deepcopy(tools["tools"][0])
    if provider == "anthropic":
        extra["name"] += suffix
    else:
        extra["function"]["name"] += suffix
    tools["tools"].append(extra)
    assert any(line.startswith("tools ") for line in compare(provider, recorded, tools).refused)
    stranger = body(recorded)
    if provider == "anthropic":
        stranger["messages"][2]["content"][0]["tool_use_id"] += suffix
    else:
        stranger["messages"][2]["tool_call_id"] += suffix
    assert any("never made" in line for line in compare(provider, recorded, stranger).refused)


@pytest.mark.parametrize(
    ("asked", "said"), [({"stream": False}, "stream false"), ({"stream": None}, "stream null"), ({}, "no stream")]
)
@pytest.mark.parametrize("case", [("anthropic", ANTHROPIC), ("openai", OPENAI)])
def test_a_request_for_an_answer_not_streamed_is_refused(case: Any, asked: dict[str, Any], said: str) -> None:
    # The capture's turn is a stream: answering a request for one JSON body with it is a wrong answer
    # (the SDK's non-streaming call cannot read it), so it is refused, saying why.
    provider, recorded = case
    assert recorded["body"]["stream"] is True
    request = {key: value for key, value in body(recorded).items() if key != "stream"} | asked
    refused = compare(provider, recorded, request).refused
    assert refused == (f"{said}: it asks for an answer not streamed, where the capture's turn is a stream",)


def test_a_request_without_stream_is_not_refused_where_the_api_streams_by_default_or_by_its_path() -> None:
    # The near misses: Ollama's /api/chat streams unless told not to; Gemini and Bedrock stream by their
    # path, their recorded requests hold no ``stream``.
    ollama = {"body": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}
    assert compare("ollama", ollama, copy.deepcopy(ollama["body"])).refused == ()
    assert "stream" in compare("ollama", ollama, {**ollama["body"], "stream": False}).refused[0]
    gemini = {"body": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}}
    assert compare("gemini", gemini, copy.deepcopy(gemini["body"])) == Difference()


def test_a_request_streaming_with_1_for_true_is_noted() -> None:
    # Python's == says True == 1; the request sent another value than the recorded one: noted, and
    # served (the turn is answered as recorded). The near misses: the same true, and 4096.0 for 4096.
    assert ANTHROPIC["body"]["stream"] is True
    streaming = compare("anthropic", ANTHROPIC, {**body(ANTHROPIC), "stream": 1})
    assert streaming.refused == () and streaming.noted == ("stream differs (1, the capture's true)",)
    assert compare("anthropic", ANTHROPIC, body(ANTHROPIC)) == Difference()
    tokens = ANTHROPIC["body"]["max_tokens"]
    assert compare("anthropic", ANTHROPIC, {**body(ANTHROPIC), "max_tokens": float(tokens)}) == Difference()
    assert compare("anthropic", ANTHROPIC, {**body(ANTHROPIC), "max_tokens": True}).noted != ()
