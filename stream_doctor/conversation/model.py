"""A conversation in neutral terms: its turns (the request sent, the stream received) and what each request says.

A request body is read once, by its provider family's module in ``requests/``, into
``RequestFacts``: the tools it declares (name → schema), the assistant turns it sends back
(``EchoedCall``: each call's id, name and input as echoed) and the tool results it carries
(``ToolResult``), each with its JSON path in the body (those parts are in ``request_parts.py``). ``pairing`` matches them across turns into
``PairingProblem`` values (``capture/problem_facts.py``); the SD6xx and SD7xx rules only read what is here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.capture.base import Pos
from stream_doctor.util.records import record
from stream_doctor.values.events import MISSING
from stream_doctor.values.findings import Finding, Location

if TYPE_CHECKING:
    from weakref import ReferenceType

    from stream_doctor.conversation.pairing_problems import PairingProblem, Place
    from stream_doctor.conversation.request_parts import EchoedCall, MessageFacts, ToolDef, ToolResult
    from stream_doctor.conversation.schemas import Violation

Family = Literal["anthropic", "openai-chat", "responses", "gemini", "bedrock", "unknown"]


@record
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
    #: The paths of fields that hold another type than the list they must be (``tools: 7``): each was
    #: read as none, and SD001 reports it.
    not_lists: tuple[str, ...] = ()
    #: The previous request's facts when this request's messages, calls and results begin with that
    #: one's very objects (``requests.History`` read only what is new), so that pairing extends its index
    #: without comparing them again. Weak: a request's facts do not keep every earlier request's alive.
    extends: ReferenceType[RequestFacts] | None = field(default=None, compare=False, repr=False)


NO_FACTS = RequestFacts("unknown")


@dataclass(frozen=True, slots=True, eq=False)
class RequestsRead:
    """How a conversation's requests were read (``requests.History``): ``extended`` from their first new
    item (they repeated the previous request's history), ``whole`` the others, ``edited`` those of them
    whose history did not start with the previous request's (a summarised or truncated context)."""

    extended: int
    whole: int
    edited: int


@record
class RequestInfo:
    """The request a turn sent: where it is in the capture, and its body as recorded (secrets redacted)."""

    pos: Pos
    method: str | None
    url: str | None
    body: Any
    places: dict[str, Pos] = field(default_factory=dict)  # JSON path -> position, when the container keeps them


@record
class Turn:
    """One request and the stream it got back."""

    number: int  # 1-based
    interaction: int | None  # what positions name (None: a capture of a single stream)
    request: RequestInfo | None
    facts: RequestFacts
    stream: AccumulatedStream
    findings: tuple[Finding, ...]  # the stream rules' findings about this turn
    status: int | None = None  # the HTTP status, when the container recorded it


@dataclass(frozen=True)
class Conversation:
    path: str
    provider: str
    turns: tuple[Turn, ...]
    tools: dict[str, ToolDef] | None  # from --tools, for turns whose request declares none
    problems: tuple[PairingProblem, ...]  # what pairing found (conversation/pairing_problems.py)
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

    @cached_property
    def checked_calls(self) -> tuple[tuple[Turn, ToolCall, dict[str, ToolDef]], ...]:
        """Every complete client call whose arguments parsed, in a turn that has tool definitions: found
        once, for the schema rules that each read them (SD704 to SD706, and ``violations``)."""
        checked = []
        for turn in self.turns:
            tools = self.tools_for(turn)
            if not tools:
                continue
            for call in turn.stream.calls:
                if call.server_side or call.status != "complete" or call.parse_failure is not None:
                    continue
                if call.input_format != "json" or call.name is None:
                    continue
                checked.append((turn, call, tools))
        return tuple(checked)

    @cached_property
    def violations(self) -> tuple[tuple[Turn, ToolCall, ToolDef, list[Violation]], ...]:
        """Each checked call whose tool has a schema, with what in its arguments breaks it (often
        nothing): validated once, for the rules that read it (SD701 to SD703)."""
        from stream_doctor.conversation.schemas import violations

        validated = []
        for turn, call, tools in self.checked_calls:
            tool = tools.get(call.name or "")
            if tool is not None and tool.schema is not None:
                validated.append((turn, call, tool, violations(tool, call.arguments)))
        return tuple(validated)


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


def is_empty_input(value: Any) -> bool:
    """What an empty-input client echoes: ``{}``, an empty arguments string, nothing at all."""
    return value is not MISSING and (value is None or value == {} or value == "")
