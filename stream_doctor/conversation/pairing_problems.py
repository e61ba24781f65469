"""What pairing (``pairing.py``) finds when a conversation's calls and results do not line up across
turns: one ``PairingProblem`` record per kind, each kind reported by one SD6xx rule, at a ``Place``
(``Conversation.location`` turns it into a finding's location).

Imported only when a capture holds a conversation (requests), so a plain replay does not build
these classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from stream_doctor.capture.base import Pos


@dataclass(frozen=True, slots=True)
class Place:
    """A place in a conversation: a part of a turn's request (``request_path``) or a position in its stream."""

    turn: int  # 1-based
    pos: Pos | None = None
    request_path: str | None = None


@dataclass(frozen=True, slots=True)
class PairingProblem:
    """A problem a conversation's pairing records (``pairing.py``): a call and its result that do not
    line up across turns. One record per kind, each kind one SD6xx rule. Records hold facts (ids,
    names, paths, the family's placement rule broken), never prose: the rule that reports a kind words it."""

    kind: ClassVar[str]

    at: Place
    call_id: str | None
    related: tuple[tuple[str, Place], ...] = field(default=(), kw_only=True)


@dataclass(frozen=True, slots=True)
class CallIdReused(PairingProblem):
    """A response reuses the id of a call an earlier turn streamed."""

    kind: ClassVar[str] = "call-id-reused"
    name: str | None
    first_turn: int
    first_name: str | None


@dataclass(frozen=True, slots=True)
class CallIdRewritten(PairingProblem):
    """A streamed call sent back (matched by name and order) under another id."""

    kind: ClassVar[str] = "call-id-rewritten"
    name: str | None
    streamed: str
    echoed: str


@dataclass(frozen=True, slots=True)
class ItemIdAsCallId(PairingProblem):
    """Responses: the ``fc_`` item id sent where the call id belongs (``what``: in the echoed call or its result)."""

    kind: ClassVar[str] = "item-id-as-call-id"
    name: str | None
    item_id: str
    proper_call_id: str | None
    what: Literal["function_call", "result"]


@dataclass(frozen=True, slots=True)
class EchoedInput(PairingProblem):
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
class ThoughtSignatureNotSentBack(PairingProblem):
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
class ResultMisplaced(PairingProblem):
    kind: ClassVar[str] = "result-misplaced"
    why: Misplacement
    family: str
    call_path: str | None = None  # away-from-its-call: where the call is in the request
    turn: int | None = None  # call-not-sent-back: the turn that streamed the call


@dataclass(frozen=True, slots=True)
class CallWithoutResult(PairingProblem):
    """``where``: the call is in the request (``request``) or was only streamed (in ``turn``)."""

    kind: ClassVar[str] = "call-without-result"
    name: str | None
    where: Literal["request", "stream"]
    family: str
    turn: int | None = None


@dataclass(frozen=True, slots=True)
class ResultWithoutCall(PairingProblem):
    """``by``: the result names its call by id, or (without one) by name and order."""

    kind: ClassVar[str] = "result-without-call"
    name: str | None
    by: Literal["id", "name"]


@dataclass(frozen=True, slots=True)
class DuplicateResult(PairingProblem):
    kind: ClassVar[str] = "duplicate-result"
    first: str  # the request path of the first result for the id
