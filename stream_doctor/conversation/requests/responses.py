"""OpenAI Responses request bodies (wire-formats §3.7).

Tools are flat: ``tools[].parameters`` for ``type: "function"``; a ``custom`` tool takes free
text; hosted tools (``web_search``, ``file_search``, ``mcp`` …) run on the server. The history is
``input[]``: messages, ``function_call`` items (``id`` is the item id ``fc_…``, ``call_id`` the
call's id ``call_…``), ``function_call_output`` items answering a ``call_id``, and
``item_reference`` items naming a stored item by its id. ``previous_response_id`` continues a
stored response instead of sending its items back.
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
HISTORY = "input"
#: The body's fields its tools are read from: the same objects again are the same tools.
TOOLS = ("tools",)

_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}

#: Input items that answer a client-run call, and the field naming the call they answer (openai-python
#: ``types/responses/response_input_item_param.py``: FunctionCallOutput, ComputerCallOutput,
#: LocalShellCallOutput, ShellCallOutput, ApplyPatchCallOutput, McpApprovalResponse, and the
#: CustomToolCallOutput and ToolSearchOutput item params). ``local_shell_call_output`` names its call
#: in ``id`` in older SDK types (the call's ``call_id`` value), in ``call_id`` in newer ones; an MCP
#: approval answers the ``mcp_approval_request`` item by its id. Server-run calls (``web_search_call``,
#: ``file_search_call``, ``code_interpreter_call``, ``image_generation_call``, ``mcp_call``, a
#: ``tool_search_call`` with ``execution: "server"``) need no result from the client.
_OUTPUTS: dict[str, tuple[str, ...]] = {
    "function_call_output": ("call_id",),
    "custom_tool_call_output": ("call_id",),
    "computer_call_output": ("call_id",),
    "shell_call_output": ("call_id",),
    "apply_patch_call_output": ("call_id",),
    "tool_search_output": ("call_id",),
    "local_shell_call_output": ("call_id", "id"),
    "mcp_approval_response": ("approval_request_id",),
}


def tools(body: dict[str, Any], wrong: list[str]) -> tuple[dict[str, ToolDef], frozenset[str]]:
    found: dict[str, ToolDef] = {}
    hosted: set[str] = set()
    for index, tool in enumerate(listed(body.get("tools"), "tools", wrong)):
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        name = tool.get("name")
        if kind == "function" and isinstance(name, str):
            found[name] = ToolDef(name, tool.get("parameters"), f"tools[{index}].parameters")
        elif isinstance(name, str):
            found[name] = ToolDef(name, None, f"tools[{index}]")
        elif isinstance(kind, str):
            hosted.add(kind)
    return found, frozenset(hosted)


def parse(
    body: dict[str, Any], start: int = 0, before: RequestFacts | None = None, known: Tools | None = None
) -> RequestFacts:
    """The body's facts (see ``requests.Family.parse``)."""
    read = known or read_tools(tools, body)
    wrong = list(read.wrong)
    messages: list[MessageFacts] = []
    calls: list[EchoedCall] = []
    results: list[ToolResult] = []
    items = body.get(HISTORY)  # a string is one user message
    for index, item in history([] if isinstance(items, str) else listed(items, HISTORY, wrong), start):
        if not isinstance(item, dict):
            continue
        path = f"input[{index}]"
        kind = string(item.get("type"))  # a list or object there is no kind (and not hashable)
        if kind in _CALLS:
            messages.append(MessageFacts(index, "assistant", path))
            value, raw = arguments(item.get(_CALLS[kind])) if kind == "function_call" else (item.get("input"), None)
            calls.append(
                EchoedCall(
                    string(item.get("call_id")),
                    string(item.get("name")),
                    value,
                    raw,
                    index,
                    path,
                    item_id=string(item.get("id")),
                )
            )
        elif kind in _OUTPUTS:
            messages.append(MessageFacts(index, "tool", path))
            answered = next((string(item.get(f)) for f in _OUTPUTS[kind] if string(item.get(f))), None)
            results.append(ToolResult(answered, None, index, path))
        elif kind == "item_reference":
            messages.append(MessageFacts(index, "other", path))
            calls.append(
                EchoedCall(None, None, None, None, index, path, item_id=string(item.get("id")), reference=True)
            )
        else:
            messages.append(MessageFacts(index, role_of(item.get("role")), path, text_of(item.get("content"))))
    return facts(
        "responses",
        before,
        read,
        (messages, calls, results),
        wrong,
        previous_response_id=string(body.get("previous_response_id")),
        forced_tool=forced_tool(body.get("tool_choice")),
    )
