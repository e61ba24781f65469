"""Anthropic Messages request bodies (wire-formats §1.7), also sent through Bedrock's InvokeModel.

Tools: ``tools[].input_schema``; a tool with a versioned ``type`` (``web_search_20250305``,
``bash_20250124`` …) is defined by Anthropic and has no schema here. The history: ``messages[]``
whose ``content`` is a string or a list of blocks; ``tool_use`` (and the server's
``server_tool_use`` / ``mcp_tool_use``) in assistant messages, ``tool_result`` in user messages.
"""

from __future__ import annotations

from typing import Any

from stream_doctor.conversation.model import RequestFacts
from stream_doctor.conversation.request_parts import EchoedCall, MessageFacts, ToolDef, ToolResult
from stream_doctor.conversation.requests.common import (
    Tools,
    facts,
    forced_tool,
    history,
    listed,
    read_tools,
    role_of,
    string,
    text_of,
)

#: The body's list of earlier turns, which each request repeats and extends.
HISTORY = "messages"
#: The body's fields its tools are read from: the same objects again are the same tools.
TOOLS = ("tools",)

CLIENT_CALLS = {"tool_use": False, "server_tool_use": True, "mcp_tool_use": True}


def tools(body: dict[str, Any], wrong: list[str]) -> tuple[dict[str, ToolDef], frozenset[str]]:
    found: dict[str, ToolDef] = {}
    provided: set[str] = set()
    for index, tool in enumerate(listed(body.get("tools"), "tools", wrong)):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        name = tool["name"]
        kind = tool.get("type")
        if "input_schema" in tool:
            found[name] = ToolDef(name, tool["input_schema"], f"tools[{index}].input_schema")
        else:
            found[name] = ToolDef(name, None, f"tools[{index}]")
            if isinstance(kind, str) and kind != "custom":
                provided.add(name)
    return found, frozenset(provided)


def parse(
    body: dict[str, Any], start: int = 0, before: RequestFacts | None = None, known: Tools | None = None
) -> RequestFacts:
    """The body's facts (see ``requests.Family.parse``)."""
    read = known or read_tools(tools, body)
    wrong = list(read.wrong)
    messages: list[MessageFacts] = []
    calls: list[EchoedCall] = []
    results: list[ToolResult] = []
    for index, message in history(listed(body.get(HISTORY), HISTORY, wrong), start):
        if not isinstance(message, dict):
            continue
        path = f"messages[{index}]"
        messages.append(MessageFacts(index, role_of(message.get("role")), path, text_of(message.get("content"))))
        content = message.get("content")
        if not isinstance(content, list):
            continue
        other_before = False
        for position, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            kind = string(block.get("type"))  # a list or object there is no kind (and not hashable)
            where = f"{path}.content[{position}]"
            if kind in CLIENT_CALLS:
                calls.append(
                    EchoedCall(
                        string(block.get("id")),
                        string(block.get("name")),
                        block.get("input"),
                        None,
                        index,
                        where,
                        server_side=CLIENT_CALLS[kind],
                    )
                )
            elif kind == "tool_result":
                results.append(ToolResult(string(block.get("tool_use_id")), None, index, where, other_before))
            elif not (isinstance(kind, str) and kind.endswith("_tool_result")):
                other_before = True
    return facts(
        "anthropic", before, read, (messages, calls, results), wrong, forced_tool=forced_tool(body.get("tool_choice"))
    )
