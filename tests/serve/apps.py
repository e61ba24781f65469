"""Small agent loops on the real SDKs, run against the served captures: each correct loop has a buggy
twin that runs the tool at the call's start event with the ``{}`` placeholder (the empty-input bug).

Each loop sends the capture's first request (the user's question, the tools), runs every call the
answer holds with a stub tool, sends the results back, and stops at an answer without calls or at an
API error (the server's 400 past the capture's last turn). It returns the calls it ran.
"""

from __future__ import annotations

import json
from typing import Any, Callable

Ran = list[tuple[str, Any]]
Loop = Callable[[Any, dict[str, Any]], Ran]
TURNS = 4  # a loop never runs away


def _first(request: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in request["body"].items() if key != "stream"}


def _answered(body: dict[str, Any], content: list[dict[str, Any]]) -> bool:
    """The assistant turn and a result for each of its calls added to ``body``; False: it made no call."""
    calls = [block for block in content if block["type"] == "tool_use"]
    results = [{"type": "tool_result", "tool_use_id": call["id"], "content": "done"} for call in calls]
    body["messages"] = [
        *body["messages"],
        {"role": "assistant", "content": content},
        {"role": "user", "content": results},
    ]
    return bool(calls)


def anthropic_correct(client: Any, request: dict[str, Any]) -> Ran:
    """The stream helper: the final message's tool_use blocks, their inputs accumulated by the SDK."""
    import anthropic

    body, ran = _first(request), []
    for _ in range(TURNS):
        try:
            with client.messages.stream(**body) as stream:
                message = stream.get_final_message()
        except anthropic.APIStatusError:
            break
        ran += [(block.name, block.input) for block in message.content if block.type == "tool_use"]
        if not _answered(body, [block.model_dump(exclude_none=True) for block in message.content]):
            break
    return ran


def anthropic_buggy(client: Any, request: dict[str, Any]) -> Ran:
    """Raw iteration that runs each tool at content_block_start, with the start event's ``{}``."""
    import anthropic

    body, ran = _first(request), []
    for _ in range(TURNS):
        content: list[dict[str, Any]] = []
        try:
            for event in client.messages.create(**body, stream=True):
                if event.type == "content_block_start":
                    content.append(event.content_block.model_dump(exclude_none=True))
                    if event.content_block.type == "tool_use":
                        ran.append((event.content_block.name, event.content_block.input))
                elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                    content[event.index]["text"] += event.delta.text
        except anthropic.APIStatusError:
            break
        if not _answered(body, content):
            break
    return ran


async def anthropic_correct_async(client: Any, request: dict[str, Any]) -> Ran:
    """Raw async iteration that accumulates each call's input_json_delta fragments and parses them at its stop."""
    import anthropic

    body, ran = _first(request), []
    for _ in range(TURNS):
        content: list[dict[str, Any]] = []
        fragments: dict[int, str] = {}
        try:
            async for event in await client.messages.create(**body, stream=True):
                if event.type == "content_block_start":
                    content.append(event.content_block.model_dump(exclude_none=True))
                elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    fragments[event.index] = fragments.get(event.index, "") + event.delta.partial_json
                elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                    content[event.index]["text"] += event.delta.text
                elif event.type == "content_block_stop" and event.index in fragments:
                    content[event.index]["input"] = json.loads(fragments[event.index] or "{}")
                    ran.append((content[event.index]["name"], content[event.index]["input"]))
        except anthropic.APIStatusError:
            break
        if not _answered(body, content):
            break
    return ran


def openai_loop(client: Any, request: dict[str, Any], buggy: bool = False) -> Ran:
    """Chat Completions, raw chunks: the correct loop joins each call's argument fragments; the buggy one
    runs the call at its first chunk, with what that chunk carried (``""``: it sends back ``{}``)."""
    import openai

    body, ran = _first(request), []
    for _ in range(TURNS):
        calls: dict[int, dict[str, Any]] = {}
        try:
            for chunk in client.chat.completions.create(**body, stream=True):
                for delta in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                    call = calls.setdefault(delta.index, {"id": delta.id, "name": "", "arguments": ""})
                    call["name"] += delta.function.name or ""
                    call["arguments"] += delta.function.arguments or ""
                    if buggy and delta.id:
                        call["ran"] = call["arguments"] or "{}"
        except openai.APIStatusError:
            break
        sent = [(call["id"], call["name"], call.get("ran", call["arguments"])) for call in calls.values()]
        ran += [(name, json.loads(arguments)) for _, name, arguments in sent]
        if not _sent_back(body, sent):
            break
    return ran


def _sent_back(body: dict[str, Any], calls: list[tuple[str, str, str]]) -> bool:
    """Chat Completions: the assistant turn of ``calls`` (id, name, arguments) and a result each added
    to ``body``; False: it made no call."""
    sent = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
    results = [{"role": "tool", "tool_call_id": i, "content": "done"} for i, _, _ in calls]
    body["messages"] = [*body["messages"], {"role": "assistant", "content": None, "tool_calls": sent}, *results]
    return bool(calls)


def openai_helper(client: Any, request: dict[str, Any]) -> Ran:
    """The stream helper (``chat.completions.stream``): the final completion's calls, accumulated by the SDK."""
    import openai

    body, ran = _first(request), []
    for _ in range(TURNS):
        try:
            with client.chat.completions.stream(**body) as stream:
                completion = stream.get_final_completion()
        except openai.APIStatusError:
            break
        calls = [(c.id, c.function.name, c.function.arguments) for c in completion.choices[0].message.tool_calls or ()]
        ran += [(name, json.loads(arguments)) for _, name, arguments in calls]
        if not _sent_back(body, calls):
            break
    return ran


async def openai_async(client: Any, request: dict[str, Any]) -> Ran:
    """Raw async chunks, each call's argument fragments joined by index and parsed once the stream ends."""
    import openai

    body, ran = _first(request), []
    for _ in range(TURNS):
        calls: dict[int, list[str]] = {}
        try:
            async for chunk in await client.chat.completions.create(**body, stream=True):
                for delta in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                    call = calls.setdefault(delta.index, ["", "", ""])
                    call[0] += delta.id or ""
                    call[1] += delta.function.name or ""
                    call[2] += delta.function.arguments or ""
        except openai.APIStatusError:
            break
        ran += [(name, json.loads(arguments)) for _, name, arguments in calls.values()]
        if not _sent_back(body, [(i, n, a) for i, n, a in calls.values()]):
            break
    return ran
