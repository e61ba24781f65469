"""A conversation in neutral terms: its turns (the request sent, the stream received) and what each request says.

A request body is read once, by its provider family's module in ``requests/``, into
``RequestFacts``: the tools it declares (name → schema), the assistant turns it sends back
(``EchoedCall``: each call's id, name and input as echoed) and the tool results it carries
(``ToolResult``), each with its JSON path in the body. ``pairing`` matches them across turns into
``PairingIssue`` values; the SD6xx and SD7xx rules only read what is here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import Pos
from stream_doctor.events import MISSING
from stream_doctor.findings import Finding, Location

Dialect = Literal["json-schema", "openapi"]  # openapi: Gemini's ``parameters`` (an OpenAPI 3.0 Schema subset)
Role = Literal["assistant", "user", "tool", "system", "other"]


@dataclass(frozen=True, slots=True)
class ToolDef:
    """A tool the request declared."""

    name: str
    schema: Any  # the JSON Schema of its input; None when the tool has none (a provider-defined tool)
    path: str  # where the schema (or the tool) is declared: ``tools[0].input_schema``
    dialect: Dialect = "json-schema"


@dataclass(frozen=True, slots=True)
class EchoedCall:
    """A call in an assistant turn the client sent back in a later request."""

    call_id: str | None
    name: str | None
    input: Any  # as echoed, parsed (an arguments string is parsed); MISSING when it does not parse
    raw: str | None  # the arguments string as echoed (OpenAI-style), None when echoed as an object
    message: int  # index of its message (``messages``, ``contents``, ``input`` items)
    path: str  # ``messages[3].content[1]``
    server_side: bool = False  # a server tool's call, whose result the server supplied
    item_id: str | None = None  # Responses: the item id (``fc_…``) it was sent back with
    reference: bool = False  # Responses ``item_reference``: a call named only by its item id
    signed: bool = False  # Gemini: the functionCall part is sent back with a thoughtSignature
    part: int | None = None  # Gemini: its position among the parts of its content


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool result the request carries."""

    call_id: str | None  # None when the protocol matches results by name (Gemini without ids, Ollama)
    name: str | None
    message: int
    path: str
    after_other_content: bool = False  # another kind of block comes before it in its message


@dataclass(frozen=True, slots=True)
class MessageFacts:
    index: int
    role: Role
    path: str
    text: str | None = None  # the message's text content (all its text parts), when it has any


Family = Literal["anthropic", "openai-chat", "responses", "gemini", "bedrock", "unknown"]


@dataclass(frozen=True)
class RequestFacts:
    family: Family
    tools: dict[str, ToolDef] = field(default_factory=dict)
    messages: tuple[MessageFacts, ...] = ()
    calls: tuple[EchoedCall, ...] = ()
    results: tuple[ToolResult, ...] = ()
    previous_response_id: str | None = None  # Responses: the earlier response this request continues
    by_name: bool = False  # results may carry no id and are then matched by name and order (Gemini, Ollama)
    provider_tools: frozenset[str] = frozenset()  # declared tools the provider runs or defines itself
    #: The request made the model call a tool: a tool's name (OpenAI ``tool_choice: {function: {name}}``,
    #: Anthropic ``{"type": "tool", "name"}``, Bedrock ``toolChoice.tool``, Gemini ``allowedFunctionNames``
    #: of one) or ``"any"`` (OpenAI ``required``, Anthropic ``any``, Bedrock ``any``, Gemini mode ``ANY``).
    forced_tool: str | None = None


NO_FACTS = RequestFacts("unknown")


@dataclass(frozen=True)
class RequestInfo:
    """The request a turn sent: where it is in the capture, and its body as recorded (secrets redacted)."""

    pos: Pos
    method: str | None
    url: str | None
    body: Any
    places: dict[str, Pos] = field(default_factory=dict)  # JSON path -> position, when the container keeps them


@dataclass(frozen=True)
class Turn:
    """One request and the stream it got back."""

    number: int  # 1-based
    interaction: int | None  # what positions name (None: a capture of a single stream)
    request: RequestInfo | None
    facts: RequestFacts
    stream: AccumulatedStream
    findings: tuple[Finding, ...]  # the stream rules' findings about this turn
    status: int | None = None  # the HTTP status, when the container recorded it


@dataclass(frozen=True, slots=True)
class Place:
    """A place in a conversation: a part of a turn's request (``request_path``) or a position in its stream."""

    turn: int  # 1-based
    pos: Pos | None = None
    request_path: str | None = None


@dataclass(frozen=True, slots=True)
class PairingIssue:
    """A call and its result that do not line up across turns: one record per kind, each kind one
    SD6xx rule. Records hold facts (ids, names, paths, the family's placement rule broken), never
    prose: the rule that reports a kind words it."""

    kind: ClassVar[str]

    at: Place
    call_id: str | None
    related: tuple[tuple[str, Place], ...] = field(default=(), kw_only=True)


@dataclass(frozen=True, slots=True)
class CallIdReused(PairingIssue):
    """A response reuses the id of a call an earlier turn streamed."""

    kind: ClassVar[str] = "call-id-reused"
    name: str | None
    first_turn: int
    first_name: str | None


@dataclass(frozen=True, slots=True)
class CallIdRewritten(PairingIssue):
    """A streamed call sent back (matched by name and order) under another id."""

    kind: ClassVar[str] = "call-id-rewritten"
    name: str | None
    streamed: str
    echoed: str


@dataclass(frozen=True, slots=True)
class ItemIdAsCallId(PairingIssue):
    """Responses: the ``fc_`` item id sent where the call id belongs (``what``: in the echoed call or its result)."""

    kind: ClassVar[str] = "item-id-as-call-id"
    name: str | None
    item_id: str
    proper_call_id: str | None
    what: Literal["function_call", "result"]


@dataclass(frozen=True, slots=True)
class EchoedInput(PairingIssue):
    """A call sent back with another input than it streamed (``raw``: the echoed arguments text, if any)."""

    kind: ClassVar[str] = "echoed-input"
    name: str | None
    streamed: Any
    echoed: Any
    raw: str | None


@dataclass(frozen=True, slots=True)
class EchoedEmptyInput(EchoedInput):
    kind: ClassVar[str] = "echoed-empty-input"


@dataclass(frozen=True, slots=True)
class EchoedInputDiffers(EchoedInput):
    kind: ClassVar[str] = "echoed-input-differs"


@dataclass(frozen=True, slots=True)
class ThoughtSignatureNotSentBack(PairingIssue):
    """Gemini: a streamed call whose part carried a thoughtSignature is sent back without it
    (``why`` "dropped"), or with it but no longer in the place the stream gave it ("moved":
    another position among the turn's calls, or another content)."""

    kind: ClassVar[str] = "thought-signature-not-sent-back"
    name: str | None
    why: Literal["dropped", "moved"]
    streamed_position: int  # 0-based among the streamed turn's calls
    echoed_position: int | None = None  # 0-based among the calls sent back, when moved


#: Why a result is not where its family wants it.
Misplacement = Literal[
    "after-other-content",  # Anthropic: another block comes before the tool_result in its message
    "away-from-its-call",  # the call is in the request, the result not where the family wants it
    "call-not-sent-back",  # the assistant turn with the call (streamed in ``turn``) is not in the request
    "item-not-sent-back",  # Responses: neither the function_call item nor a previous_response_id
]


@dataclass(frozen=True, slots=True)
class ResultMisplaced(PairingIssue):
    kind: ClassVar[str] = "result-misplaced"
    why: Misplacement
    family: str
    call_path: str | None = None  # away-from-its-call: where the call is in the request
    turn: int | None = None  # call-not-sent-back: the turn that streamed the call


@dataclass(frozen=True, slots=True)
class CallWithoutResult(PairingIssue):
    """``where``: the call is in the request (``request``) or was only streamed (in ``turn``)."""

    kind: ClassVar[str] = "call-without-result"
    name: str | None
    where: Literal["request", "stream"]
    family: str
    turn: int | None = None


@dataclass(frozen=True, slots=True)
class ResultWithoutCall(PairingIssue):
    """``by``: the result names its call by id, or (without one) by name and order."""

    kind: ClassVar[str] = "result-without-call"
    name: str | None
    by: Literal["id", "name"]


@dataclass(frozen=True, slots=True)
class DuplicateResult(PairingIssue):
    kind: ClassVar[str] = "duplicate-result"
    first: str  # the request path of the first result for the id


@dataclass(frozen=True)
class Conversation:
    path: str
    provider: str
    turns: tuple[Turn, ...]
    tools: dict[str, ToolDef] | None  # from --tools, for turns whose request declares none
    issues: tuple[PairingIssue, ...]
    tools_path: str | None = None  # the --tools file

    def turn(self, number: int) -> Turn:
        return self.turns[number - 1]

    def request_location(self, number: int, request_path: str | None) -> Location:
        """Where a part of turn ``number``'s request is: the closest place the container knows, and the JSON path."""
        turn = self.turn(number)
        path = turn.stream.capture.path  # the turn's file: several captures may make one conversation
        if turn.request is None:
            return Location(path, interaction=turn.interaction, request_path=request_path or "")
        pos = turn.request.pos
        places = turn.request.places
        if request_path and places:
            probe = request_path
            while probe:
                found = places.get(probe)
                if found is not None:
                    pos = found
                    break
                probe = _parent(probe)
        return Location(path, pos.line, None, pos.offset, turn.interaction, request_path or "")

    def stream_location(self, number: int, pos: Pos | None) -> Location:
        turn = self.turn(number)
        return Location.at(turn.stream.capture.path, pos, turn.interaction)

    def location(self, place: Place) -> Location:
        if place.request_path is not None:
            return self.request_location(place.turn, place.request_path)
        return self.stream_location(place.turn, place.pos)

    def tool_location(self, turn: Turn, tool: ToolDef) -> Location:
        """Where a tool's schema is declared: in the turn's request, or in the --tools file."""
        if turn.facts.tools.get(tool.name) is tool:
            return self.request_location(turn.number, tool.path)
        return Location(self.tools_path or "--tools", request_path=tool.path)

    def tools_for(self, turn: Turn) -> dict[str, ToolDef] | None:
        """The tools turn ``turn``'s calls are checked against: its request's, else --tools, else None."""
        if turn.facts.tools:
            return turn.facts.tools
        return self.tools


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


def is_empty_input(value: Any) -> bool:
    """What an empty-input client echoes: ``{}``, an empty arguments string, nothing at all."""
    return value is not MISSING and (value is None or value == {} or value == "")
