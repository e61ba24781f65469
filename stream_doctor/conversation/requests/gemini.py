"""Gemini and Vertex AI ``generateContent`` request bodies (wire-formats §4.4).

Tools: ``tools[].functionDeclarations[]`` with ``parameters`` (an OpenAPI 3.0 Schema subset:
upper-case types, ``nullable``) or ``parametersJsonSchema`` (plain JSON Schema); the REST API
also takes snake_case. The history is ``contents[]``: ``model`` turns with ``functionCall``
parts, and the next turn's ``functionResponse`` parts. Ids are optional on both: without them a
response answers a call by its name and its order.
"""

from __future__ import annotations

from typing import Any

from stream_doctor.conversation.model import RequestFacts
from stream_doctor.conversation.request_parts import EchoedCall, MessageFacts, ToolDef, ToolResult
from stream_doctor.conversation.requests.common import (
    Tools,
    facts,
    history,
    listed,
    read_tools,
    role_of,
    string,
    text_of,
)

#: The body's list of earlier turns, which each request repeats and extends.
HISTORY = "contents"
#: The body's fields its tools are read from: the same objects again are the same tools.
TOOLS = ("tools",)


def _get(value: dict[str, Any], camel: str, snake: str) -> Any:
    return value[camel] if camel in value else value.get(snake)


def tools(body: dict[str, Any], wrong: list[str]) -> tuple[dict[str, ToolDef], frozenset[str]]:
    found: dict[str, ToolDef] = {}
    builtin: set[str] = set()
    for index, tool in enumerate(listed(body.get("tools"), "tools", wrong)):
        if not isinstance(tool, dict):
            continue
        declarations = _get(tool, "functionDeclarations", "function_declarations")
        if not isinstance(declarations, list):
            builtin.update(k for k in tool if isinstance(k, str))  # googleSearch, codeExecution …
            continue
        for position, declaration in enumerate(declarations):
            if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
                continue
            name = declaration["name"]
            where = f"tools[{index}].functionDeclarations[{position}]"
            json_schema = _get(declaration, "parametersJsonSchema", "parameters_json_schema")
            if json_schema is not None:
                found[name] = ToolDef(name, json_schema, f"{where}.parametersJsonSchema")
            elif declaration.get("parameters") is not None:
                found[name] = ToolDef(name, declaration["parameters"], f"{where}.parameters", "openapi")
            else:
                found[name] = ToolDef(name, None, where)
    return found, frozenset(builtin)


def parse(
    body: dict[str, Any], start: int = 0, before: RequestFacts | None = None, known: Tools | None = None
) -> RequestFacts:
    """The body's facts (see ``requests.Family.parse``)."""
    read = known or read_tools(tools, body)
    wrong = list(read.wrong)
    messages: list[MessageFacts] = []
    calls: list[EchoedCall] = []
    results: list[ToolResult] = []
    for index, content in history(listed(body.get(HISTORY), HISTORY, wrong), start):
        if not isinstance(content, dict):
            continue
        path = f"contents[{index}]"
        messages.append(
            MessageFacts(index, role_of(content.get("role") or "user"), path, text_of(content.get("parts")))
        )
        other_before = False
        for position, part in enumerate(listed(content.get("parts"), f"{path}.parts", wrong)):
            if not isinstance(part, dict):
                continue
            where = f"{path}.parts[{position}]"
            call = _get(part, "functionCall", "function_call")
            response = _get(part, "functionResponse", "function_response")
            if isinstance(call, dict):
                signed = bool(_get(part, "thoughtSignature", "thought_signature"))
                name = string(call.get("name"))
                args = call.get("args", {})
                calls.append(
                    EchoedCall(string(call.get("id")), name, args, None, index, where, signed=signed, part=position)
                )
            elif isinstance(response, dict):
                results.append(
                    ToolResult(string(response.get("id")), string(response.get("name")), index, where, other_before)
                )
            else:
                other_before = True
    return facts("gemini", before, read, (messages, calls, results), wrong, by_name=True, forced_tool=_forced(body))


def _forced(body: dict[str, Any]) -> str | None:
    """``toolConfig.functionCallingConfig``: mode ``ANY`` forces a call, of the one allowed function if one is named."""
    config = _get(body, "toolConfig", "tool_config")
    calling = _get(config, "functionCallingConfig", "function_calling_config") if isinstance(config, dict) else None
    if not isinstance(calling, dict) or str(calling.get("mode", "")).upper() != "ANY":
        return None
    allowed = _get(calling, "allowedFunctionNames", "allowed_function_names")
    return allowed[0] if isinstance(allowed, list) and len(allowed) == 1 and isinstance(allowed[0], str) else "any"
