"""Request bodies to neutral facts, one module per provider family.

``parse(provider, body)`` picks the family from the provider the stream was detected as (Mistral,
Ollama and Cohere send OpenAI-style bodies; for Bedrock the body's shape tells Converse from
InvokeModel, which sends the model's own). Requests of the other providers (the AI SDK's UI
messages, Gemini Interactions) are not read: no facts, so nothing is paired or validated. ``tools_from(value)`` reads a
``--tools`` file: a list of tool definitions in any provider's shape, or a whole request body.
"""

from __future__ import annotations

from operator import is_
from typing import Any, Protocol

from stream_doctor.capture.repeats import repeats_items
from stream_doctor.conversation.model import NO_FACTS, RequestFacts, RequestsRead
from stream_doctor.conversation.request_parts import ToolDef
from stream_doctor.conversation.requests.common import Tools, listed, read_tools
from stream_doctor.util.registry import LazyRegistry


class Family(Protocol):
    """A provider family's module: the key of its history, the keys its tools are read from, its reader,
    and the reader of its tool declarations (the declared tools; some families also return the hosted
    tools' kinds)."""

    HISTORY: str
    TOOLS: tuple[str, ...]

    def parse(
        self, body: dict[str, Any], start: int = 0, before: RequestFacts | None = None, known: Tools | None = None
    ) -> RequestFacts:
        """The body's facts, its history read from item ``start`` on after ``before``'s (the previous
        request's facts, which ``History`` reuses), its tools ``known`` when read already."""
        ...

    def tools(self, body: dict[str, Any], wrong: list[str]) -> Any: ...


#: Each provider's request reader by the provider's name, imported on first use; several providers
#: send one family's bodies. ``bedrock`` is Converse's reader, but a Bedrock body is read by its
#: shape (``_by_shape``: InvokeModel sends the model's own body).
READERS: LazyRegistry[Family] = LazyRegistry(
    {
        "anthropic": "stream_doctor.conversation.requests.anthropic",
        "openai": "stream_doctor.conversation.requests.openai_chat",
        "mistral": "stream_doctor.conversation.requests.openai_chat",
        "ollama": "stream_doctor.conversation.requests.openai_chat",
        "cohere": "stream_doctor.conversation.requests.openai_chat",
        "openai-responses": "stream_doctor.conversation.requests.responses",
        "gemini": "stream_doctor.conversation.requests.gemini",
        "bedrock": "stream_doctor.conversation.requests.bedrock",
    }
)


def parse(provider: str, body: Any) -> RequestFacts:
    """What a request body says about tools, earlier calls and their results."""
    family = _family(provider, body)
    return NO_FACTS if family is None else family.parse(body)


class History:
    """A conversation's requests read in order, each once for what is new.

    An agent's every request repeats the previous one's history and adds its new turns, so a
    session's bytes grow with the square of its turns. A request whose history starts with the
    previous request's whole history (the same JSON values, ``jsontext.equal``: an item edited from
    ``true`` to ``1`` is an edit) is read from its first new item; the facts of the items before it
    are the previous request's. A history that was edited (summarised, truncated, a changed first
    message) is read whole: ``extended`` counts the requests read from their prefix, ``whole`` the
    others, ``edited`` those of them whose history did not start with the previous request's. A
    request whose tools are the previous request's very objects (``capture.repeats`` makes an equal
    ``tools`` list the previous one) has its tools: they are not read again.
    """

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.previous: tuple[Family, list[Any], RequestFacts] | None = None
        #: the previous request's family, the values its tools were read from, and what they declare
        self.tools: tuple[Family, tuple[Any, ...], Tools] | None = None
        self.extended = 0
        self.edited = 0
        self.whole = 0

    @property
    def counts(self) -> RequestsRead:
        return RequestsRead(self.extended, self.whole, self.edited)

    def parse(self, body: Any) -> RequestFacts:
        """The facts ``parse(provider, body)`` gives, but for ``not_lists``: a field that should hold a
        list and does not, inside an item of the repeated history, is listed at the request that
        brought the item, not again at each request that repeats it (SD001 says it once, as SD006 says
        an undocumented field once); a history read whole lists it again."""
        family = _family(self.provider, body)
        if family is None:
            self.previous = None
            return NO_FACTS
        items = body.get(family.HISTORY)
        repeated = self._repeated(family, items)
        start, before = (0, None) if repeated is None else repeated
        facts = family.parse(body, start, before, self._tools(family, body))
        self.previous = (family, items, facts) if type(items) is list else None
        return facts

    def _tools(self, family: Family, body: dict[str, Any]) -> Tools:
        """The body's tools: the previous request's when read from the very same objects."""
        sources = tuple(map(body.get, family.TOOLS))
        previous = self.tools
        if previous is not None and previous[0] is family and all(map(is_, sources, previous[1])):
            return previous[2]
        known = read_tools(family.tools, body)
        self.tools = (family, sources, known)
        return known

    def _repeated(self, family: Family, items: Any) -> tuple[int, RequestFacts] | None:
        """How many items of the history the previous request sent the same, and their facts
        (None: read it whole)."""
        previous = self.previous
        if previous is None or previous[0] is not family or type(items) is not list or not previous[1]:
            self.whole += 1
            return None
        _, before, facts = previous
        if repeats_items(items, before):
            self.extended += 1
            return len(before), facts
        self.edited += 1
        self.whole += 1
        return None


def _family(provider: str, body: Any) -> Family | None:
    if not isinstance(body, dict):
        return None
    return _by_shape(body) if provider == "bedrock" else READERS.get(provider)


def _by_shape(body: dict[str, Any]) -> Family | None:
    if "contents" in body:
        return READERS["gemini"]
    if "toolConfig" in body or _has_block(body, ("toolUse", "toolResult", "text"), typed=False):
        return READERS["bedrock"]
    if "input" in body and "messages" not in body:
        return READERS["openai-responses"]
    if "messages" in body:
        if "anthropic_version" in body or _has_block(body, ("type",), typed=True) or _anthropic_tools(body):
            return READERS["anthropic"]
        return READERS["openai"]
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
    bedrock = READERS["bedrock"]
    candidates = [
        bedrock.tools(value, wrong),
        bedrock.tools({"toolConfig": {"tools": listed_tools}}, wrong),  # a bare list of toolSpec items
        READERS["openai"].tools(value, wrong),
        READERS["openai-responses"].tools(value, wrong)[0],
        READERS["gemini"].tools(value, wrong)[0],
        READERS["anthropic"].tools(value, wrong)[0],
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
