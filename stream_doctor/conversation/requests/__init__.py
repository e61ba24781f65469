"""Request bodies to neutral facts, one module per provider family.

``parse(provider, body)`` picks the family from the provider the stream was detected as (Mistral,
Ollama and Cohere send OpenAI-style bodies; for Bedrock the body's shape tells Converse from
InvokeModel, which sends the model's own). Requests of the other providers (the AI SDK's UI
messages, Gemini Interactions) are not read: no facts, so nothing is paired or validated. ``tools_from(value)`` reads a
``--tools`` file: a list of tool definitions in any provider's shape, or a whole request body.
"""

from __future__ import annotations

from typing import Any

from stream_doctor.conversation.model import NO_FACTS, RequestFacts, ToolDef
from stream_doctor.conversation.requests import anthropic, bedrock, gemini, openai_chat, responses
from stream_doctor.conversation.requests.common import listed

_BY_PROVIDER = {
    "anthropic": anthropic.parse,
    "openai": openai_chat.parse,
    "mistral": openai_chat.parse,
    "ollama": openai_chat.parse,
    "cohere": openai_chat.parse,
    "openai-responses": responses.parse,
    "gemini": gemini.parse,
}


def parse(provider: str, body: Any) -> RequestFacts:
    """What a request body says about tools, earlier calls and their results."""
    if not isinstance(body, dict):
        return NO_FACTS
    reader = _by_shape(body) if provider == "bedrock" else _BY_PROVIDER.get(provider)
    if reader is None:
        return NO_FACTS
    return reader(body)


def _by_shape(body: dict[str, Any]) -> Any:
    if "contents" in body:
        return gemini.parse
    if "toolConfig" in body or _has_block(body, ("toolUse", "toolResult", "text"), typed=False):
        return bedrock.parse
    if "input" in body and "messages" not in body:
        return responses.parse
    if "messages" in body:
        if "anthropic_version" in body or _has_block(body, ("type",), typed=True) or _anthropic_tools(body):
            return anthropic.parse
        return openai_chat.parse
    return None


def _has_block(body: dict[str, Any], keys: tuple[str, ...], typed: bool) -> bool:
    """Whether the first message whose content is a list of blocks has one keyed like ``keys``, with or
    without a ``type`` (Anthropic blocks have one; Converse's unions, ``{"text": …}``, do not)."""
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            return any(
                isinstance(block, dict) and ("type" in block) == typed and any(k in block for k in keys)
                for block in content
            )
    return False


def _anthropic_tools(body: dict[str, Any]) -> bool:
    tools = body.get("tools")
    return isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools)


def tools_from(value: Any) -> dict[str, ToolDef]:
    """The tools a ``--tools`` file declares: a list of definitions in any provider's shape, or a request body."""
    if isinstance(value, dict) and not any(k in value for k in ("tools", "toolConfig", "functions")):
        value = [value]  # one tool definition
    if isinstance(value, list):
        value = {"tools": value}
    if not isinstance(value, dict):
        return {}
    found: dict[str, ToolDef] = {}
    wrong: list[str] = []  # a file whose tools are no list declares none: load_tools says so
    listed_tools = listed(value.get("tools"), "tools", wrong)
    candidates = [
        bedrock.tools(value, wrong),
        bedrock.tools({"toolConfig": {"tools": listed_tools}}, wrong),  # a bare list of toolSpec items
        openai_chat.tools(value, wrong),
        responses.tools(value, wrong)[0],
        gemini.tools(value, wrong)[0],
        anthropic.tools(value, wrong)[0],
    ]
    for index, tool in enumerate(listed_tools):
        # A bare {"name", "parameters"} (what many frameworks print) is no one provider's shape.
        if isinstance(tool, dict) and isinstance(tool.get("name"), str) and "parameters" in tool:
            candidates.append({tool["name"]: ToolDef(tool["name"], tool["parameters"], f"tools[{index}].parameters")})
    for tools in candidates:
        for name, tool in tools.items():
            if name not in found or (found[name].schema is None and tool.schema is not None):
                found[name] = tool
    return found
