"""Small helpers every request reader shares."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import orjson

from stream_doctor.conversation.model import NO_FACTS, Family, RequestFacts
from stream_doctor.conversation.request_parts import EchoedCall, MessageFacts, Role, ToolDef, ToolResult
from stream_doctor.values.events import MISSING

_ROLES: dict[str, Role] = {
    "assistant": "assistant",
    "model": "assistant",
    "chatbot": "assistant",
    "user": "user",
    "human": "user",
    "tool": "tool",
    "function": "tool",
    "system": "system",
    "developer": "system",
}


def role_of(value: Any) -> Role:
    return _ROLES.get(value, "other") if isinstance(value, str) else "other"


def history(items: list[Any], start: int) -> Iterator[tuple[int, Any]]:
    """A body's history as ``(index, item)`` from item ``start`` on: the items before it were read
    with the previous request, which sent them too (and are not stepped over again: a session's
    last request holds every item before it)."""
    return enumerate(items[start:] if start else items, start)


class Tools(NamedTuple):
    """A body's tools as its family reads them: the declared ones, those the provider runs or defines
    itself, and the paths of the fields that were no list (``wrong``: SD001)."""

    declared: dict[str, ToolDef]
    provided: frozenset[str]
    wrong: tuple[str, ...]


def read_tools(reader: Callable[[dict[str, Any], list[str]], Any], body: dict[str, Any]) -> Tools:
    """A family's ``tools(body, wrong)`` as ``Tools`` (some families also return the provided tools)."""
    wrong: list[str] = []
    found = reader(body, wrong)
    declared, provided = found if isinstance(found, tuple) else (found, frozenset())
    return Tools(declared, provided, tuple(wrong))


def facts(
    family: Family,
    before: RequestFacts | None,
    tools: Tools,
    parts: tuple[list[MessageFacts], list[EchoedCall], list[ToolResult]],
    wrong: Sequence[str],
    *,
    by_name: bool = False,
    previous_response_id: str | None = None,
    forced_tool: str | None = None,
) -> RequestFacts:
    """A request's facts, built once: the messages, calls and results read (``parts``) after those of
    ``before``, the previous request's facts when its history was read from its first new item (see
    ``History``); the other fields are this request's own."""
    messages, calls, results = parts
    if before is None:
        leading: RequestFacts = NO_FACTS
        extends = None
    else:
        leading, extends = before, weakref.ref(before)
    return RequestFacts(
        family,
        tools.declared,
        leading.messages + tuple(messages),
        leading.calls + tuple(calls),
        leading.results + tuple(results),
        previous_response_id=previous_response_id,
        by_name=leading.by_name or by_name,
        provider_tools=tools.provided,
        forced_tool=forced_tool,
        not_lists=tuple(wrong),
        extends=extends,
    )


def string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def listed(value: Any, path: str, wrong: list[str]) -> list[Any]:
    """A field that holds a list: the list, or none when it is absent or null. Any other value (``"tools":
    7``, ``"messages": true``, an object) is a request the provider rejects: its path goes to ``wrong``
    (reported by SD001) and the field is read as none, so the rest of the body is still read."""
    if isinstance(value, list):
        return value
    if value is not None:
        wrong.append(path)
    return []


def arguments(value: Any) -> tuple[Any, str | None]:
    """An echoed call's input: ``(parsed value, the string as sent)``; an empty string is ``{}``.

    OpenAI-style APIs send arguments back as a JSON string, others as an object.
    """
    if not isinstance(value, str):
        return value, None
    if not value.strip():
        return {}, value
    try:
        return orjson.loads(value), value
    except orjson.JSONDecodeError:
        return MISSING, value


def forced_tool(choice: Any) -> str | None:
    """What a ``tool_choice`` (OpenAI Chat and Responses, Anthropic) or Bedrock ``toolChoice`` forces:
    a tool's name, ``"any"``, or None when the model may answer without a tool."""
    if choice in ("required", "any"):
        return "any"
    if not isinstance(choice, dict):
        return None
    kind = choice.get("type")
    if kind in ("any", "required") or isinstance(choice.get("any"), dict):
        return "any"
    function = choice.get("function") if isinstance(choice.get("function"), dict) else choice.get("tool")
    for holder in (function, choice):
        name = holder.get("name") if isinstance(holder, dict) else None
        if isinstance(name, str) and name and (holder is not choice or kind in ("function", "tool")):
            return name
    return None


def text_of(content: Any) -> str | None:
    """A message's text: a string, or its text parts joined (``{"type": "text"|"output_text"|"input_text",
    "text"}`` blocks, Gemini's and Bedrock's ``{"text"}`` parts); None when it has none."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        part["text"]
        for part in content
        if isinstance(part, dict)
        and isinstance(part.get("text"), str)
        and part.get("type", "text") in ("text", "output_text", "input_text")
        and not part.get("thought")
    ]
    return "".join(texts) if texts else None
