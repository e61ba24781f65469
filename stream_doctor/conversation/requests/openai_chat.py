"""OpenAI Chat Completions request bodies, and the servers that share the shape (wire-formats §2.4, §5.3, §7).

Tools: ``tools[].function.parameters`` (legacy ``functions[].parameters``). The history:
``messages[]``; an assistant message's ``tool_calls[]`` (``id``, ``function.name``,
``function.arguments`` as a JSON string: Ollama sends an object) and, for each call, a ``role:
"tool"`` message with its ``tool_call_id``. Cohere v2 uses the same shape; Ollama's native
``/api/chat`` names the tool (``tool_name``) instead of the id, so its results are matched by
name and order.
"""

from __future__ import annotations

from typing import Any

from stream_doctor.conversation.model import RequestFacts
from stream_doctor.conversation.request_parts import EchoedCall, MessageFacts, ToolDef, ToolResult
from stream_doctor.conversation.requests.common import (
    Tools,
    arguments,
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
TOOLS = ("tools", "functions")


def tools(body: dict[str, Any], wrong: list[str]) -> dict[str, ToolDef]:
    found: dict[str, ToolDef] = {}
    for index, tool in enumerate(listed(body.get("tools"), "tools", wrong)):
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            where = f"tools[{index}].function.parameters"
            found[function["name"]] = ToolDef(function["name"], function.get("parameters"), where)
    for index, function in enumerate(listed(body.get("functions"), "functions", wrong)):
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            where = f"functions[{index}].parameters"
            found[function["name"]] = ToolDef(function["name"], function.get("parameters"), where)
    return found


def parse(
    body: dict[str, Any], start: int = 0, before: RequestFacts | None = None, known: Tools | None = None
) -> RequestFacts:
    """The body's facts (see ``requests.Family.parse``)."""
    messages: list[MessageFacts] = []
    calls: list[EchoedCall] = []
    results: list[ToolResult] = []
    wrong: list[str] = []
    by_name = False
    for index, message in history(listed(body.get(HISTORY), HISTORY, wrong), start):
        if not isinstance(message, dict):
            continue
        path = f"messages[{index}]"
        role = role_of(message.get("role"))
        messages.append(MessageFacts(index, role, path, text_of(message.get("content"))))
        if role == "assistant":
            for position, call in enumerate(listed(message.get("tool_calls"), f"{path}.tool_calls", wrong)):
                if not isinstance(call, dict):
                    continue
                function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
                value, raw = arguments(function.get("arguments"))
                where = f"{path}.tool_calls[{position}]"
                calls.append(EchoedCall(string(call.get("id")), string(function.get("name")), value, raw, index, where))
            legacy = message.get("function_call")
            if isinstance(legacy, dict):
                value, raw = arguments(legacy.get("arguments"))
                calls.append(EchoedCall(None, string(legacy.get("name")), value, raw, index, f"{path}.function_call"))
        elif role == "tool":
            call_id = string(message.get("tool_call_id"))
            name = string(message.get("tool_name")) or string(message.get("name"))
            by_name = by_name or call_id is None
            results.append(ToolResult(call_id, name, index, path))
    legacy = body.get("function_call")  # the functions API: {"name": …} forces that function
    forced = forced_tool(body.get("tool_choice")) or (string(legacy.get("name")) if isinstance(legacy, dict) else None)
    read = known or read_tools(tools, body)
    parts = (messages, calls, results)
    return facts("openai-chat", before, read, parts, wrong + list(read.wrong), by_name=by_name, forced_tool=forced)
