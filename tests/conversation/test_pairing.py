"""Calls and results across turns, per provider: what lines up, and each kind of issue when it does not."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor.conversation.model import RequestFacts
from stream_doctor.conversation.pairing import _Index, pair
from stream_doctor.conversation.pairing_problems import CallIdRewritten, CallWithoutResult, ResultMisplaced
from stream_doctor.conversation.request_parts import ToolResult
from stream_doctor.conversation.requests import History
from tests.conversation.helpers import turn

TOOLS = [
    {"name": "get_weather", "input_schema": {"type": "object"}},
    {"name": "get_time", "input_schema": {"type": "object"}},
]
ASK = {"role": "user", "content": "Weather and time?"}
A, B = "toolu_01A", "toolu_01B"
WEATHER = '{"city": "Paris"}'


def anthropic_body(*messages: dict) -> dict:
    return {"model": "claude", "tools": TOOLS, "messages": [ASK, *messages]}


def use(call_id: str, name: str = "get_weather", value: object = None) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"city": "Paris"} if value is None else value}


def result(call_id: str) -> dict:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}


def kinds(turns: list) -> list[tuple[str, str | None]]:  # type: ignore[type-arg]
    return [(issue.kind, issue.call_id) for issue in pair(turns)]


def first_turn(*calls: tuple) -> object:  # type: ignore[type-arg]
    return turn(1, "anthropic", anthropic_body(), calls or [(A, "get_weather", [WEATHER])])


def test_anthropic_clean_conversation() -> None:
    second = turn(
        2,
        "anthropic",
        anthropic_body({"role": "assistant", "content": [use(A)]}, {"role": "user", "content": [result(A)]}),
    )
    assert kinds([first_turn(), second]) == []


def test_anthropic_missing_result_for_a_call_sent_back() -> None:
    calls = [(A, "get_weather", [WEATHER]), (B, "get_time", ['{"tz": "CET"}'])]
    echo = {"role": "assistant", "content": [use(A), use(B, "get_time", {"tz": "CET"})]}
    second = turn(2, "anthropic", anthropic_body(echo, {"role": "user", "content": [result(A)]}))
    issues = pair([first_turn(*calls), second])
    assert [(i.kind, i.call_id, i.at.request_path) for i in issues] == [
        ("call-without-result", B, "messages[1].content[1]")
    ]


def test_anthropic_unknown_id_duplicate_and_text_first() -> None:
    echo = {"role": "assistant", "content": [use(A)]}
    unknown = turn(2, "anthropic", anthropic_body(echo, {"role": "user", "content": [result("toolu_other")]}))
    assert kinds([first_turn(), unknown]) == [("call-without-result", A), ("result-without-call", "toolu_other")]
    twice = turn(2, "anthropic", anthropic_body(echo, {"role": "user", "content": [result(A), result(A)]}))
    assert kinds([first_turn(), twice]) == [("duplicate-result", A)]
    text_first = turn(
        2, "anthropic", anthropic_body(echo, {"role": "user", "content": [{"type": "text", "text": "x"}, result(A)]})
    )
    assert kinds([first_turn(), text_first]) == [("result-misplaced", A)]


def test_anthropic_result_two_messages_late_or_without_its_call() -> None:
    echo = {"role": "assistant", "content": [use(A)]}
    late = turn(
        2,
        "anthropic",
        anthropic_body(
            echo,
            {"role": "user", "content": "wait"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [result(A)]},
        ),
    )
    assert kinds([first_turn(), late]) == [("result-misplaced", A)]
    dropped = turn(
        2, "anthropic", {"model": "claude", "tools": TOOLS, "messages": [ASK, {"role": "user", "content": [result(A)]}]}
    )
    issues = pair([first_turn(), dropped])
    assert [(i.kind, i.call_id) for i in issues] == [("result-misplaced", A)]
    assert isinstance(issues[0], ResultMisplaced) and issues[0].why == "call-not-sent-back" and issues[0].turn == 1


def test_stream_call_neither_sent_back_nor_answered() -> None:
    second = turn(
        2,
        "anthropic",
        anthropic_body({"role": "assistant", "content": "I checked."}, {"role": "user", "content": "and?"}),
    )
    issues = pair([first_turn(), second])
    assert issues == [
        CallWithoutResult(issues[0].at, A, "get_weather", "stream", "anthropic", 1, related=issues[0].related)
    ]
    assert issues[0].related[0][1].turn == 1


def test_server_tools_need_no_result_and_a_paused_turn_continues_cleanly() -> None:
    server = ("srvtoolu_01", "web_search", ['{"query": "x"}'], {"server_side": True})
    echo = {
        "role": "assistant",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []},
        ],
    }
    assert kinds([first_turn(server), turn(2, "anthropic", anthropic_body(echo))]) == []


def test_echo_checks_empty_input_other_input_and_rewritten_ids() -> None:
    empty = turn(
        2,
        "anthropic",
        anthropic_body({"role": "assistant", "content": [use(A, value={})]}, {"role": "user", "content": [result(A)]}),
    )
    assert kinds([first_turn(), empty]) == [("echoed-empty-input", A)]
    other = turn(
        2,
        "anthropic",
        anthropic_body(
            {"role": "assistant", "content": [use(A, value={"city": "Lyon"})]}, {"role": "user", "content": [result(A)]}
        ),
    )
    assert kinds([first_turn(), other]) == [("echoed-input-differs", A)]
    renamed = "gw_" + A
    prefixed = turn(
        2,
        "anthropic",
        anthropic_body(
            {"role": "assistant", "content": [use(renamed)]}, {"role": "user", "content": [result(renamed)]}
        ),
    )
    issues = pair([first_turn(), prefixed])
    assert [(i.kind, i.streamed, i.echoed) for i in issues if isinstance(i, CallIdRewritten)] == [
        ("call-id-rewritten", A, renamed)
    ]
    assert len(issues) == 1


def test_an_echoed_input_with_0_for_false_differs() -> None:
    # Python's == says False == 0; the tool the echo describes ran with another input. The near misses:
    # the same false, and 1.0 for 1 (one JSON number: JSON.parse reads both as 1).
    streamed = first_turn((A, "get_weather", ['{"city": "Paris", "metric": false, "days": 1}']))

    def echoed(value: dict) -> object:  # type: ignore[type-arg]
        return turn(
            2,
            "anthropic",
            anthropic_body(
                {"role": "assistant", "content": [use(A, value=value)]}, {"role": "user", "content": [result(A)]}
            ),
        )

    assert kinds([streamed, echoed({"city": "Paris", "metric": 0, "days": 1})]) == [("echoed-input-differs", A)]
    assert kinds([streamed, echoed({"city": "Paris", "metric": False, "days": 1})]) == []
    assert kinds([streamed, echoed({"city": "Paris", "metric": False, "days": 1.0})]) == []


def test_only_what_a_request_adds_is_checked() -> None:
    bad_history = anthropic_body(
        {"role": "assistant", "content": [use(A)]}, {"role": "user", "content": [result(A), result(A)]}
    )
    second = turn(2, "anthropic", bad_history)
    third = turn(
        3,
        "anthropic",
        {
            **bad_history,
            "messages": [
                *bad_history["messages"],
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": "thanks"},
            ],
        },
    )
    assert kinds([first_turn(), second, third]) == [("duplicate-result", A)]  # reported in turn 2 only


def test_openai_tool_messages_must_come_before_the_next_user_message() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    echo = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_A", "type": "function", "function": {"name": "get_weather", "arguments": WEATHER}},
            {"id": "call_B", "type": "function", "function": {"name": "get_weather", "arguments": WEATHER}},
        ],
    }
    first = turn(
        1,
        "openai",
        {"tools": tools, "messages": [ASK]},
        [("call_A", "get_weather", [WEATHER]), ("call_B", "get_weather", [WEATHER])],
    )
    clean = turn(
        2,
        "openai",
        {
            "tools": tools,
            "messages": [
                ASK,
                echo,
                {"role": "tool", "tool_call_id": "call_A", "content": "1"},
                {"role": "tool", "tool_call_id": "call_B", "content": "2"},
            ],
        },
    )
    assert kinds([first, clean]) == []
    late = turn(
        2,
        "openai",
        {
            "tools": tools,
            "messages": [
                ASK,
                echo,
                {"role": "tool", "tool_call_id": "call_A", "content": "1"},
                {"role": "user", "content": "?"},
                {"role": "tool", "tool_call_id": "call_B", "content": "2"},
            ],
        },
    )
    assert kinds([first, late]) == [("result-misplaced", "call_B")]
    empty_args = {
        **echo,
        "tool_calls": [
            {**echo["tool_calls"][0], "function": {"name": "get_weather", "arguments": ""}},
            echo["tool_calls"][1],
        ],
    }
    answered = [
        {"role": "tool", "tool_call_id": "call_A", "content": "1"},
        {"role": "tool", "tool_call_id": "call_B", "content": "2"},
    ]
    assert kinds([first, turn(2, "openai", {"tools": tools, "messages": [ASK, empty_args, *answered]})]) == [
        ("echoed-empty-input", "call_A")
    ]


def test_ollama_results_by_tool_name() -> None:
    echo = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
    }
    first = turn(1, "ollama", {"messages": [ASK]}, [(None, "get_weather", [WEATHER])])
    assert (
        kinds(
            [
                first,
                turn(
                    2,
                    "ollama",
                    {"messages": [ASK, echo, {"role": "tool", "tool_name": "get_weather", "content": "sunny"}]},
                ),
            ]
        )
        == []
    )
    wrong = turn(2, "ollama", {"messages": [ASK, echo, {"role": "tool", "tool_name": "get_time", "content": "12:00"}]})
    assert kinds([first, wrong]) == [("call-without-result", None), ("result-without-call", None)]


def test_responses_previous_response_item_ids_and_order() -> None:
    call = ("call_1", "get_weather", [WEATHER], {"item_id": "fc_1"})
    first = turn(
        1, "openai-responses", {"tools": [], "input": [{"role": "user", "content": "?"}]}, [call], message_id="resp_1"
    )
    stored = turn(
        2,
        "openai-responses",
        {
            "previous_response_id": "resp_1",
            "input": [{"type": "function_call_output", "call_id": "call_1", "output": "sunny"}],
        },
    )
    assert kinds([first, stored]) == []
    by_item = turn(
        2,
        "openai-responses",
        {
            "previous_response_id": "resp_1",
            "input": [{"type": "function_call_output", "call_id": "fc_1", "output": "sunny"}],
        },
    )
    assert kinds([first, by_item]) == [("item-id-as-call-id", "fc_1")]
    unstored = turn(
        2, "openai-responses", {"input": [{"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]}
    )
    assert kinds([first, unstored]) == [("result-misplaced", "call_1")]
    sent_back = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": WEATHER,
    }
    output = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
    assert kinds([first, turn(2, "openai-responses", {"input": [sent_back, output]})]) == []
    assert kinds([first, turn(2, "openai-responses", {"input": [output, sent_back]})]) == [
        ("result-misplaced", "call_1")
    ]


def test_gemini_by_name_and_order_or_by_id() -> None:
    calls = [(None, "get_weather", [WEATHER]), (None, "get_time", ['{"tz": "CET"}'])]
    model = {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
            {"functionCall": {"name": "get_time", "args": {"tz": "CET"}}},
        ],
    }
    first = turn(1, "gemini", {"contents": [{"role": "user", "parts": [{"text": "?"}]}]}, calls)
    answers = {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_time", "response": {}}},
            {"functionResponse": {"name": "get_weather", "response": {}}},
        ],
    }
    assert (
        kinds([first, turn(2, "gemini", {"contents": [{"role": "user", "parts": [{"text": "?"}]}, model, answers]})])
        == []
    )
    twice = {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {}}},
            {"functionResponse": {"name": "get_weather", "response": {}}},
        ],
    }
    issues = kinds([first, turn(2, "gemini", {"contents": [{"role": "user", "parts": [{"text": "?"}]}, model, twice]})])
    assert issues == [("call-without-result", None), ("result-without-call", None)]
    # the client gave the calls ids of its own (pydantic-ai's pyd_ai_…): matched by id, nothing to report
    with_ids = {
        "role": "model",
        "parts": [
            {"functionCall": {"id": "pyd_1", "name": "get_weather", "args": {"city": "Paris"}}},
            {"functionCall": {"id": "pyd_2", "name": "get_time", "args": {"tz": "CET"}}},
        ],
    }
    id_answers = {
        "role": "user",
        "parts": [
            {"functionResponse": {"id": "pyd_1", "name": "get_weather", "response": {}}},
            {"functionResponse": {"id": "pyd_2", "name": "get_time", "response": {}}},
        ],
    }
    assert (
        kinds(
            [first, turn(2, "gemini", {"contents": [{"role": "user", "parts": [{"text": "?"}]}, with_ids, id_answers]})]
        )
        == []
    )


def test_bedrock_tool_result_in_the_next_message() -> None:
    config = {"toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {}}}}]}}
    ask = {"role": "user", "content": [{"text": "?"}]}
    echo = {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}],
    }
    first = turn(1, "bedrock", {"messages": [ask], **config}, [("tooluse_1", "get_weather", [WEATHER])])
    answer = {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "sunny"}]}}]}
    assert kinds([first, turn(2, "bedrock", {"messages": [ask, echo, answer], **config})]) == []
    assert kinds(
        [
            first,
            turn(2, "bedrock", {"messages": [ask, echo, {"role": "user", "content": [{"text": "and?"}]}], **config}),
        ]
    ) == [("call-without-result", "tooluse_1")]


def test_positional_ids_reused_across_responses() -> None:
    first = turn(1, "anthropic", anthropic_body(), [("call_0", "get_weather", [WEATHER])])
    second = turn(
        2,
        "anthropic",
        anthropic_body(
            {"role": "assistant", "content": [use("call_0")]}, {"role": "user", "content": [result("call_0")]}
        ),
        [("call_0", "get_time", ['{"tz": "CET"}'])],
    )
    assert kinds([first, second]) == [("call-id-reused", "call_0")]


def test_a_new_conversation_in_the_same_capture_is_not_held_to_the_last_one() -> None:
    other = turn(
        2,
        "anthropic",
        {"model": "claude", "tools": TOOLS, "messages": [{"role": "user", "content": "Something else entirely"}]},
    )
    assert kinds([first_turn(), other]) == []


def test_gemini_ids_on_both_sides_must_match() -> None:
    first = turn(
        1, "gemini", {"contents": [{"role": "user", "parts": [{"text": "?"}]}]}, [("fc_1", "get_weather", [WEATHER])]
    )
    model = {
        "role": "model",
        "parts": [{"functionCall": {"id": "fc_1", "name": "get_weather", "args": {"city": "Paris"}}}],
    }
    answer = {"role": "user", "parts": [{"functionResponse": {"id": "fc_9", "name": "get_weather", "response": {}}}]}
    body = {"contents": [{"role": "user", "parts": [{"text": "?"}]}, model, answer]}
    assert kinds([first, turn(2, "gemini", body)]) == [("call-without-result", "fc_1"), ("result-without-call", "fc_9")]


def test_requests_of_providers_without_a_reader_are_not_paired() -> None:
    ui_messages = {
        "messages": [{"role": "user", "parts": [{"type": "text", "text": "?"}]}, {"role": "assistant", "parts": []}]
    }
    first = turn(1, "vercel-ai", {"messages": ui_messages["messages"][:1]}, [("call_1", "get_weather", [WEATHER])])
    assert kinds([first, turn(2, "vercel-ai", ui_messages)]) == []


#: Items of a Responses history: calls, their outputs (some for calls never made), a reference and text.
RESPONSES_POOL = [
    {"role": "user", "content": "?"},
    *({"type": "function_call", "id": f"fc_{n}", "call_id": f"c{n}", "name": "f", "arguments": "{}"} for n in (1, 2)),
    *({"type": "function_call_output", "call_id": f"c{n}", "output": "ok"} for n in (1, 2, 3)),
    {"type": "item_reference", "id": "fc_1"},
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 6), max_size=4), st.booleans(), st.integers(1, 3)), max_size=6))
def test_responses_pairing_from_the_prefix_agrees_with_pairing_each_request_whole(steps: list) -> None:  # type: ignore[type-arg]
    """Each Responses request read from its prefix (``History``: its facts extend the previous one's, and the
    index is extended without comparing them, its results bisected) is paired as when every request is read
    whole (new facts each time: the index is built again): the same problems, at the same places. A step
    that truncates the history is the near miss that must be read, and indexed, whole."""
    history, items, incremental, whole = History("openai-responses"), [RESPONSES_POOL[0]], [], []
    for number, (added, truncate, called) in enumerate(steps, start=1):
        items = (items[1:] if truncate else items) + [RESPONSES_POOL[i] for i in added]
        body = {"tools": [], "input": list(items)}
        made = [(f"c{called}", "f", ["{}"], {"item_id": f"fc_{called}"})]
        shown = turn(number, "openai-responses", body, made)
        incremental.append(replace(shown, facts=history.parse(body)))
        whole.append(shown)
    assert [(i.kind, i.call_id, i.at) for i in pair(incremental)] == [(i.kind, i.call_id, i.at) for i in pair(whole)]


@given(st.lists(st.integers(0, 5), max_size=8), st.integers(-1, 6))
def test_results_after_a_message_in_and_out_of_order(messages: list[int], after: int) -> None:
    """The results after a message are those a scan of every result finds, in order, whether the results'
    messages never go down (bisected) or do (scanned: the near miss)."""
    results = tuple(ToolResult(f"c{n}", None, message, f"input[{message}]") for n, message in enumerate(messages))
    index = _Index(RequestFacts("responses", results=results))
    assert index.results_in_order == (messages == sorted(messages))
    assert list(index.results_after(after)) == [r for r in results if r.message > after]
