"""A conversation's requests read each once for what is new (``requests.History``): the same facts as
reading every request whole, whatever the history does from one request to the next (but a field that is
not a list in a repeated item, listed once)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.sessions import PROVIDERS, session
from stream_doctor import replay
from stream_doctor.conversation.requests import History, parse
from stream_doctor.values.findings import Severity

#: One provider of each family, and items of its history: calls, results, text, and shapes that are
#: no item at all (a string, a number, a list where an object belongs).
ITEMS: dict[str, tuple[str, list[Any]]] = {
    "anthropic": (
        "messages",
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}]},
            {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s1", "name": "web", "input": {}}]},
            {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t1"}]},
            {"role": "user", "content": [{"type": ["odd"]}, {"type": "web_search_tool_result"}]},
            "not a message",
        ],
    ),
    "openai": (
        "messages",
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": '{"a":1}'}}]},
            {"role": "assistant", "function_call": {"name": "f", "arguments": "{bad"}},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "tool", "tool_name": "f", "content": "ok"},  # Ollama: by name
            7,
        ],
    ),
    "openai-responses": (
        "input",
        [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            {"type": "item_reference", "id": "fc_1"},
            [],
        ],
    ),
    "gemini": (
        "contents",
        [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "s"}]},
            {"role": "user", "parts": [{"text": "x"}, {"functionResponse": {"name": "f", "response": {}}}]},
            None,
        ],
    ),
    "bedrock": (
        "messages",
        [
            {"role": "user", "content": [{"text": "hi"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "u1", "name": "f", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "u1", "content": []}}]},
        ],
    ),
}

#: Each family's tools fields, and values for them that requests share as the very same objects (as
#: ``capture.repeats`` makes an equal list the previous one) or not: declared tools, hosted ones, none,
#: and a value that is no list (SD001).
_FUNCTION = {"type": "function", "name": "f", "parameters": {"type": "object"}}
TOOLS: dict[str, tuple[str, list[Any]]] = {
    "anthropic": ("tools", [[{"name": "f", "input_schema": {}}, {"name": "web", "type": "web_search_1"}], 7, None]),
    "openai": ("tools", [[{"type": "function", "function": {"name": "f", "parameters": {}}}], "no", None]),
    "openai-responses": ("tools", [[_FUNCTION, {"type": "web_search"}], {"a": 1}, None]),
    "gemini": ("tools", [[{"functionDeclarations": [{"name": "f"}]}, {"googleSearch": {}}], 3, None]),
    "bedrock": ("toolConfig", [{"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {}}}}]}, {"tools": 1}]),
}

# What the next request does to the history: extends it (the common case), or edits it.
STEPS = st.one_of(
    st.tuples(st.just("extend"), st.lists(st.integers(0, 5), max_size=4)),
    st.tuples(st.just("truncate"), st.integers(0, 3)),
    st.tuples(st.just("replace"), st.integers(0, 8), st.integers(0, 5)),
    st.tuples(st.just("not a list"), st.just(0)),
)


def _next(items: list[Any], pool: list[Any], step: tuple[Any, ...]) -> Any:
    kind = step[0]
    if kind == "extend":
        return items + [pool[i % len(pool)] for i in step[1]]
    if kind == "truncate":
        return items[step[1] :]  # a summarised context drops its oldest items
    if kind == "replace" and items:
        edited = list(items)
        edited[step[1] % len(items)] = pool[step[2] % len(pool)]
        return edited
    return {"not": "a list"}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(ITEMS)), st.lists(st.tuples(STEPS, st.integers(0, 3)), min_size=1, max_size=8))
def test_the_same_facts_as_reading_every_request_whole(provider: str, steps: list[tuple[Any, ...]]) -> None:
    key, pool = ITEMS[provider]
    tools_key, tools = TOOLS[provider]
    history = History(provider)
    items: Any = []
    for step, tool in steps:
        items = _next(items if isinstance(items, list) else [], pool, step)
        # the same object as the previous request's, or an equal copy, or another value
        declared = tools[tool] if tool < len(tools) else orjson.loads(orjson.dumps(tools[0]))
        body = {key: items, tools_key: declared, "functions": declared, "tool_choice": "required"}
        assert history.parse(body) == parse(provider, body)
    assert history.extended + history.whole == len(steps)


def test_tools_that_are_the_previous_requests_very_objects_are_not_read_again() -> None:
    tools = TOOLS["openai-responses"][1][0]
    history = History("openai-responses")
    first = history.parse({"input": [], "tools": tools})
    again = history.parse({"input": [], "tools": tools})
    assert again.tools is first.tools and again.provider_tools == frozenset({"web_search"})
    # the near misses: an equal list that is another object is read, and so is another value
    copied = history.parse({"input": [], "tools": orjson.loads(orjson.dumps(tools))})
    assert copied.tools is not first.tools and copied.tools == first.tools
    wrong = history.parse({"input": [], "tools": 7})
    assert (wrong.tools, wrong.not_lists) == ({}, ("tools",))


def _body(messages: list[Any]) -> dict[str, Any]:
    return {"model": "m", "messages": messages}


def test_a_request_that_repeats_the_history_is_read_from_its_new_messages() -> None:
    pool = ITEMS["anthropic"][1]
    history = History("anthropic")
    history.parse(_body(pool[:2]))
    facts = history.parse(_body(pool[:4]))
    assert (history.extended, history.edited, history.whole) == (1, 0, 1)
    assert facts == parse("anthropic", _body(pool[:4]))
    assert [m.path for m in facts.messages] == [f"messages[{i}]" for i in range(4)]


def test_an_edited_history_is_read_whole_and_counted() -> None:
    pool = ITEMS["anthropic"][1]
    history = History("anthropic")
    history.parse(_body(pool[:3]))
    summarised = [{"role": "user", "content": "a summary"}, *pool[3:5]]
    facts = history.parse(_body(summarised))
    assert (history.extended, history.edited, history.whole) == (0, 1, 2)
    assert facts == parse("anthropic", _body(summarised))
    # the near miss: the same history sent again, and nothing new, is still its prefix
    history.parse(_body(summarised))
    assert (history.extended, history.edited) == (1, 1)


def test_a_field_that_is_not_a_list_in_the_history_is_listed_at_the_request_that_brought_it() -> None:
    # Read whole, every request that repeats the item would list it again, and SD001 would warn at each
    # turn of a session about the same field of the same message.
    odd = {"role": "assistant", "content": "a", "tool_calls": 5}
    first = [{"role": "user", "content": "hi"}, odd]
    history = History("openai")
    assert history.parse(_body(first)).not_lists == ("messages[1].tool_calls",)
    repeated = history.parse(_body([*first, {"role": "user", "content": "more"}]))
    assert repeated.not_lists == () and history.extended == 1
    assert parse("openai", _body([*first, {"role": "user", "content": "more"}])).not_lists == (
        "messages[1].tool_calls",
    )
    # the near miss: a history that was edited is read whole, and lists it again
    edited = history.parse(_body([{"role": "user", "content": "a summary"}, odd]))
    assert edited.not_lists == ("messages[1].tool_calls",) and history.edited == 1


def test_a_history_item_edited_from_true_to_1_is_an_edit() -> None:
    # Python's == says True == 1; a JSON reader (and the tool run with it) tells them apart. The near
    # miss: 1.0 for 1 is the same JSON number, the history read from its prefix.
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {"all": True}}]}
    history = History("anthropic")
    history.parse(_body([{"role": "user", "content": "go"}, call]))
    edited = orjson.loads(orjson.dumps(_body([{"role": "user", "content": "go"}, call])).replace(b"true", b"1"))
    facts = history.parse(edited)
    assert (history.extended, history.edited) == (0, 1)
    assert facts == parse("anthropic", edited) and facts.calls[0].input == {"all": 1}
    respelled = orjson.loads(orjson.dumps(edited).replace(b'"all":1', b'"all":1.0'))
    history.parse(respelled)
    assert (history.extended, history.edited) == (1, 1)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_benchmark_sessions_are_clean_and_read_from_their_prefix(provider: str) -> None:
    """``benchmarks/sessions.py`` writes sessions whose every request repeats the previous one's
    history: each after the first is read from its new items, and the replay finds nothing to warn of."""
    data = session(provider, 4)
    report = replay(data)
    assert [f.code for f in report.findings if f.severity >= Severity.WARNING] == []
    history = History(provider)
    for line in data.splitlines():
        record = orjson.loads(line)
        if record["sd"] == "request":
            history.parse(record["body"])
    assert (history.extended, history.whole, history.edited) == (3, 1, 0)


def _session_with(provider: str, turns: int, edit: Any) -> bytes:
    """A benchmark session whose request number ``edit``'s key is rewritten: ``edit`` is
    ``(request number, key, value)``."""
    number, key, value = edit
    lines, seen = [], 0
    for line in session(provider, turns).splitlines():
        record = orjson.loads(line)
        if record["sd"] == "request":
            seen += 1
            if seen == number:
                record["body"][key] = value
        lines.append(orjson.dumps(record))
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_stream_rules_read_the_facts_history_read(provider: str) -> None:
    """A turn's stream rules judge it against its request's facts as the conversation reads them once
    (History): a later request whose ``tools`` is no list is SD001 at that turn, not at the others."""
    report = replay(_session_with(provider, 3, (3, "tools", 7)))
    assert [(f.code, f.location.interaction) for f in report.findings if f.code == "SD001"] == [("SD001", 3)]
    near_miss = replay(_session_with(provider, 3, (3, "tools", [])))  # a list, if empty: no finding
    assert [f.code for f in near_miss.findings if f.code == "SD001"] == []


def test_request_of_answers_the_known_facts_only_for_that_very_body() -> None:
    from stream_doctor.rules.requested import known, request_of

    data = _session_with("anthropic", 2, (2, "tools", 7))
    stream = replay(data).turns[1].stream
    body = stream.requests[-1]
    made_up = parse("anthropic", {"messages": [], "tools": 7})
    with known(body, made_up):
        assert request_of(stream) is made_up
    equal_copy = orjson.loads(orjson.dumps(body))
    with known(equal_copy, made_up):  # an equal body is not that body: its facts are read from it
        assert request_of(stream) == parse("anthropic", body) and request_of(stream) is not made_up
    assert request_of(stream).not_lists == ("tools",)


def test_statistics_say_how_the_requests_were_read(tmp_path: Any) -> None:
    """``--statistics`` counts the requests read for what is new and those read whole, of which edited
    (History's counts); a capture with no request says nothing of requests."""
    from typer.testing import CliRunner

    from stream_doctor.cli import app

    summarised = [{"role": "user", "content": "a summary of the notes so far"}]
    capture = tmp_path / "edited.jsonl"
    capture.write_bytes(_session_with("anthropic", 4, (3, "messages", summarised)))
    result = CliRunner().invoke(app, ["replay", str(capture), "--statistics", "--width", "100"])
    assert result.exit_code == 0, result.output
    # request 1 whole; 2 extends 1; 3 sends a summary (edited); 4 the full history again (edited)
    assert "requests read for what is new: 1; read whole: 3 (2 edited)" in result.output
    for single in ("fixtures/anthropic/one_call.sse", "fixtures/anthropic/empty_input_bug.jsonl"):  # no request, one
        result = CliRunner().invoke(app, ["replay", single, "--statistics"])
        assert result.exit_code in (0, 1) and "requests read" not in result.output


#: What a turn's stream may call: ids the histories above send back or answer, and one they never do.
STREAM_CALLS = st.lists(
    st.tuples(
        st.sampled_from(["t1", "c1", "u1", "s1", "zz"]),
        st.sampled_from(["f", "web"]),
        st.sampled_from(["{}", '{"a":1}']),
    ),
    max_size=2,
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(ITEMS)), st.lists(st.tuples(STEPS, STREAM_CALLS), min_size=1, max_size=8))
def test_the_same_pairing_as_reading_every_request_whole(
    provider: str, steps: list[tuple[tuple[Any, ...], list[tuple[str, str, str]]]]
) -> None:
    """The pairing carries its lookups from one request to the next when History shares the earlier
    request's facts, and builds them again when it does not (each request read whole): the same problems."""
    from stream_doctor.capture.base import Pos
    from stream_doctor.conversation.model import RequestInfo, Turn
    from stream_doctor.conversation.pairing import pair
    from tests.conversation.helpers import stream

    key, pool = ITEMS[provider]
    history = History(provider)
    items: Any = []
    shared, whole = [], []
    for number, (step, calls) in enumerate(steps, 1):
        items = _next(items if isinstance(items, list) else [], pool, step)
        body = {key: items}
        request = RequestInfo(Pos(0, number * 100, 0), "POST", "https://example.test/v1", body)
        streamed = [(call_id, name, [arguments]) for call_id, name, arguments in calls]
        shared.append(Turn(number, number, request, history.parse(body), stream(streamed), ()))
        whole.append(Turn(number, number, request, parse(provider, body), stream(streamed), ()))
    assert pair(shared) == pair(whole)


def test_facts_read_from_the_prefix_point_at_the_facts_they_extend() -> None:
    """A request read from its new items says which facts it extends (pairing then extends its index
    without comparing the history again); a request read whole extends nothing (the near miss)."""
    pool = ITEMS["anthropic"][1]
    history = History("anthropic")
    first = history.parse(_body(pool[:2]))
    second = history.parse(_body(pool[:4]))
    assert first.extends is None
    assert second.extends is not None and second.extends() is first
    assert all(a is b for a, b in zip(second.messages, first.messages, strict=False))
    edited = history.parse(_body([{"role": "user", "content": "a summary"}, *pool[3:5]]))
    assert edited.extends is None
