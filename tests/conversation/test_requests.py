"""Request bodies to neutral facts: tools, the calls sent back, the results, each with its JSON path."""

from __future__ import annotations

from typing import Callable

import pytest

from stream_doctor.conversation.requests import parse, tools_from
from stream_doctor.values.events import MISSING

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_anthropic() -> None:
    facts = parse(
        "anthropic",
        {
            "tools": [
                {"name": "get_weather", "input_schema": SCHEMA},
                {"type": "web_search_20250305", "name": "web_search"},
            ],
            "messages": [
                {"role": "user", "content": "?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "x"},
                        {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "P"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                        {"type": "text", "text": "more"},
                    ],
                },
            ],
        },
    )
    assert facts.family == "anthropic"
    assert facts.tools["get_weather"].path == "tools[0].input_schema" and facts.tools["web_search"].schema is None
    assert facts.provider_tools == frozenset({"web_search"})
    assert [(c.call_id, c.input, c.path) for c in facts.calls] == [("t1", {"city": "P"}, "messages[1].content[1]")]
    assert [(r.call_id, r.path, r.after_other_content) for r in facts.results] == [
        ("t1", "messages[2].content[0]", False)
    ]
    assert [m.role for m in facts.messages] == ["user", "assistant", "user"]


def test_openai_chat_arguments_are_parsed_and_kept() -> None:
    facts = parse(
        "openai",
        {
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"P"}'},
                        },
                        {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{bad"}},
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
        },
    )
    assert facts.tools["get_weather"].path == "tools[0].function.parameters"
    assert [(c.call_id, c.input, c.raw) for c in facts.calls] == [
        ("c1", {"city": "P"}, '{"city":"P"}'),
        ("c2", MISSING, "{bad"),
    ]
    assert [(r.call_id, r.path) for r in facts.results] == [("c1", "messages[1]")]


def test_responses_items() -> None:
    facts = parse(
        "openai-responses",
        {
            "previous_response_id": "resp_1",
            "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}, {"type": "web_search"}],
            "input": [
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
                {"type": "item_reference", "id": "fc_0"},
                {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
            ],
        },
    )
    assert facts.previous_response_id == "resp_1" and facts.provider_tools == frozenset({"web_search"})
    assert [(c.call_id, c.item_id, c.reference) for c in facts.calls] == [
        ("call_1", "fc_1", False),
        (None, "fc_0", True),
    ]
    assert [r.path for r in facts.results] == ["input[2]"]


def test_gemini_parameters_and_parameters_json_schema() -> None:
    facts = parse(
        "gemini",
        {
            "tools": [
                {
                    "functionDeclarations": [
                        {"name": "a", "parameters": {"type": "OBJECT"}},
                        {"name": "b", "parametersJsonSchema": SCHEMA},
                    ]
                },
                {"googleSearch": {}},
            ],
            "contents": [
                {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]},
            ],
        },
    )
    assert (facts.tools["a"].dialect, facts.tools["b"].dialect) == ("openapi", "json-schema")
    assert facts.tools["b"].path == "tools[0].functionDeclarations[1].parametersJsonSchema"
    assert facts.by_name and facts.results[0].path == "contents[1].parts[0]"


def test_bedrock_converse_and_invoke_model_bodies() -> None:
    converse = parse(
        "bedrock",
        {
            "toolConfig": {"tools": [{"toolSpec": {"name": "a", "inputSchema": {"json": SCHEMA}}}]},
            "messages": [
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "u1", "name": "a", "input": {}}}]}
            ],
        },
    )
    assert converse.family == "bedrock" and converse.tools["a"].path == "toolConfig.tools[0].toolSpec.inputSchema.json"
    invoke = parse(
        "bedrock",
        {"anthropic_version": "bedrock-2023-05-31", "tools": [{"name": "a", "input_schema": SCHEMA}], "messages": []},
    )
    assert invoke.family == "anthropic"


def test_a_tools_file_in_any_providers_shape() -> None:
    tools = tools_from(
        [
            {"name": "a", "input_schema": SCHEMA},
            {"type": "function", "function": {"name": "b", "parameters": SCHEMA}},
            {"type": "function", "name": "c", "parameters": SCHEMA},
            {"toolSpec": {"name": "d", "inputSchema": {"json": SCHEMA}}},
            {"functionDeclarations": [{"name": "e", "parameters": {"type": "OBJECT"}}]},
            {"name": "f", "parameters": SCHEMA},
        ]
    )
    assert sorted(tools) == ["a", "b", "c", "d", "e", "f"]
    assert all(tool.schema is not None for tool in tools.values())
    assert sorted(tools_from({"model": "x", "tools": [{"name": "a", "input_schema": SCHEMA}], "messages": []})) == ["a"]


@pytest.mark.parametrize(
    ("provider", "body", "forced"),
    [
        ("openai", {"messages": [], "tool_choice": "required"}, "any"),
        ("openai", {"messages": [], "tool_choice": {"type": "function", "function": {"name": "f"}}}, "f"),
        ("openai", {"messages": [], "function_call": {"name": "f"}}, "f"),  # the legacy functions API
        ("openai", {"messages": [], "tool_choice": "auto"}, None),
        ("openai", {"messages": [], "tool_choice": "none"}, None),
        ("openai", {"messages": []}, None),
        ("openai-responses", {"input": [], "tool_choice": {"type": "function", "name": "f"}}, "f"),
        ("openai-responses", {"input": [], "tool_choice": "required"}, "any"),
        ("openai-responses", {"input": [], "tool_choice": {"type": "web_search_preview"}}, None),
        ("anthropic", {"messages": [], "tool_choice": {"type": "tool", "name": "f"}}, "f"),
        ("anthropic", {"messages": [], "tool_choice": {"type": "any"}}, "any"),
        ("anthropic", {"messages": [], "tool_choice": {"type": "auto"}}, None),
        ("bedrock", {"messages": [], "toolConfig": {"tools": [], "toolChoice": {"tool": {"name": "f"}}}}, "f"),
        ("bedrock", {"messages": [], "toolConfig": {"tools": [], "toolChoice": {"any": {}}}}, "any"),
        ("bedrock", {"messages": [], "toolConfig": {"tools": [], "toolChoice": {"auto": {}}}}, None),
        ("gemini", {"contents": [], "toolConfig": {"functionCallingConfig": {"mode": "ANY"}}}, "any"),
        (
            "gemini",
            {
                "contents": [],
                "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["f"]}},
            },
            "f",
        ),
        ("gemini", {"contents": [], "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}}, None),
    ],
)
def test_the_tool_a_request_forces(provider: str, body: dict, forced: str | None) -> None:

    assert parse(provider, body).forced_tool == forced


#: Each reader's list fields: the provider it is read as, the body around the field's value, the field's path
#: (issue 31: ``"tools": 7`` raised TypeError: 'int' object is not iterable).
LIST_FIELDS: list[tuple[str, Callable[[object], dict[str, object]], str]] = [
    ("anthropic", lambda v: {"tools": v}, "tools"),
    ("anthropic", lambda v: {"messages": v}, "messages"),
    ("openai", lambda v: {"tools": v}, "tools"),
    ("openai", lambda v: {"functions": v}, "functions"),
    ("openai", lambda v: {"messages": v}, "messages"),
    ("openai", lambda v: {"messages": [{"role": "assistant", "tool_calls": v}]}, "messages[0].tool_calls"),
    ("openai-responses", lambda v: {"tools": v}, "tools"),
    ("openai-responses", lambda v: {"input": v}, "input"),
    ("gemini", lambda v: {"contents": v}, "contents"),
    ("gemini", lambda v: {"tools": v}, "tools"),
    ("gemini", lambda v: {"contents": [{"role": "user", "parts": v}]}, "contents[0].parts"),
    ("bedrock", lambda v: {"toolConfig": {"tools": v}}, "toolConfig.tools"),
    ("bedrock", lambda v: {"messages": [{"role": "user", "content": v}], "toolConfig": {}}, "messages[0].content"),
]
WRONG = [7, 1.5, True, "text", {"role": "user"}]


@pytest.mark.parametrize(("provider", "body", "path"), LIST_FIELDS)
def test_a_field_that_is_no_list_is_read_as_none_and_told(
    provider: str, body: Callable[[object], dict[str, object]], path: str
) -> None:
    for value in WRONG:
        if not (provider == "openai-responses" and path == "input" and value == "text"):  # one user message
            assert parse(provider, body(value)).not_lists == (path,), value


@pytest.mark.parametrize(("provider", "body", "path"), LIST_FIELDS)
def test_a_null_or_a_list_there_is_no_wrong_type(
    provider: str, body: Callable[[object], dict[str, object]], path: str
) -> None:
    """The near misses: the field null (as absent) or a list; and a Responses input that is a string."""
    for value in (None, [], [{}]):
        assert parse(provider, body(value)).not_lists == (), value
    assert parse("openai-responses", {"input": "hello"}).not_lists == ()


def test_a_tools_file_whose_tools_are_no_list_declares_none() -> None:
    assert tools_from({"tools": 7}) == {}
