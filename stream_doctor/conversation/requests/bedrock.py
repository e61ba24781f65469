"""AWS Bedrock Converse / ConverseStream request bodies (wire-formats §6.3).

Tools: ``toolConfig.tools[].toolSpec.inputSchema.json``. The history: ``messages[]`` whose
``content[]`` blocks are unions: ``toolUse`` (``toolUseId``, ``name``, ``input``) in assistant
messages, ``toolResult`` (``toolUseId``) in the user message after. InvokeModel bodies carry the
provider's own shape (Anthropic's, with ``anthropic_version``): see ``requests.parse``.
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
TOOLS = ("toolConfig",)


def tools(body: dict[str, Any], wrong: list[str]) -> dict[str, ToolDef]:
    found: dict[str, ToolDef] = {}
    config = body.get("toolConfig")
    for index, tool in enumerate(
        listed(config.get("tools"), "toolConfig.tools", wrong) if isinstance(config, dict) else []
    ):
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            continue
        schema = spec.get("inputSchema")
        where = f"toolConfig.tools[{index}].toolSpec.inputSchema"
        if isinstance(schema, dict) and "json" in schema:
            found[spec["name"]] = ToolDef(spec["name"], schema["json"], f"{where}.json")
        else:
            found[spec["name"]] = ToolDef(spec["name"], None, where)
    return found


def parse(
    body: dict[str, Any], start: int = 0, before: RequestFacts | None = None, known: Tools | None = None
) -> RequestFacts:
    """The body's facts (see ``requests.Family.parse``)."""
    wrong: list[str] = []
    messages: list[MessageFacts] = []
    calls: list[EchoedCall] = []
    results: list[ToolResult] = []
    for index, message in history(listed(body.get(HISTORY), HISTORY, wrong), start):
        if not isinstance(message, dict):
            continue
        path = f"messages[{index}]"
        messages.append(MessageFacts(index, role_of(message.get("role")), path, text_of(message.get("content"))))
        other_before = False
        for position, block in enumerate(listed(message.get("content"), f"{path}.content", wrong)):
            if not isinstance(block, dict):
                continue
            where = f"{path}.content[{position}]"
            use = block.get("toolUse")
            result = block.get("toolResult")
            if isinstance(use, dict):
                calls.append(
                    EchoedCall(
                        string(use.get("toolUseId")), string(use.get("name")), use.get("input"), None, index, where
                    )
                )
            elif isinstance(result, dict):
                results.append(ToolResult(string(result.get("toolUseId")), None, index, where, other_before))
            else:
                other_before = True
    config = body.get("toolConfig")
    forced = forced_tool(config.get("toolChoice")) if isinstance(config, dict) else None
    read = known or read_tools(tools, body)
    return facts("bedrock", before, read, (messages, calls, results), wrong + list(read.wrong), forced_tool=forced)
