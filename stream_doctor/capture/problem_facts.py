"""Facts an adapter records about a problem it met, for the rule that reports the problem's kind.

A *problem* is what a lower layer records for a rule to report, as facts and never as prose: an
``InputProblem`` (capture/base.py: the reader or the adapter found the input wrong; an adapter
hands it on as a ``Problem`` event, with one of the records below as its ``facts``), an accumulator
``StreamProblem`` (accumulate/irregularities.py) and a ``PairingProblem`` (conversation/pairing_problems.py).

An adapter that notices something wrong emits a ``Problem`` event; where the finding's wording
depends on what was seen, the event carries one of these records and the rule words it (the
adapter writes no sentence a user reads). Records hold only plain values; they are ``NamedTuple``s,
not dataclasses, because a replay imports every one of them and a named tuple costs a fraction of a
dataclass to create (``docs/performance.md``, "Start-up").
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, Union

#: Why a streamed-argument piece (Vertex AI ``partialArgs``) could not be placed.
Unplaceable = Literal[
    "not-an-object",  # the entry is not an object (``piece``)
    "no-json-path",  # it has no string jsonPath (``piece``)
    "invalid-path",  # the jsonPath is not an RFC 9535 path into the arguments object
    "value-count",  # it carries no value or several (``values``)
    "string-not-continued",  # the open string (``path``) said willContinue, another piece came
    "string-not-finished",  # the open string (``path``) said willContinue, the call ended
    "root-is-array",  # the path indexes the arguments as an array
    "member-of-array",  # it names a member of what earlier pieces made an array
    "index-of-object",  # it indexes what earlier pieces made an object
    "element-closed",  # it goes back to array ``element``, already closed
    "member-closed",  # it goes back to a member already closed
    "elements-skipped",  # it skips array elements ``element``…``last`` (null was put there)
    "elements-skipped-too-many",  # it skips more elements than are filled with null (not placed)
    "value-type",  # its ``value_kind`` value has the wrong JSON type (null was put there)
    "continues-no-call",  # a functionCall part (``piece``) without a name continues no open call
    "args-and-partial-args",  # a part has both args and willContinue/partialArgs (args not used)
    "partial-args-not-a-list",  # partialArgs is not a list
]


class PartialArgUnplaceable(NamedTuple):
    why: Unplaceable
    call: str | None = None  # the call's label ("getWeather (call 2)"), when the piece belongs to one
    path: str | None = None  # the jsonPath as sent, or the normalized path of the open string
    piece: Any = None  # what was sent, for the kinds that show it
    values: tuple[str, ...] = ()  # value-count: the value fields the piece carried
    value_kind: str | None = None  # value-type: stringValue, numberValue or boolValue
    element: int | None = None  # element-closed: the element; elements-skipped(-too-many): the first skipped
    last: int | None = None  # elements-skipped(-too-many): the last skipped


class SplitString(NamedTuple):
    """One string argument that arrived in several pieces: its normalized path and the pieces."""

    path: str
    pieces: tuple[str, ...]


class SplitCall(NamedTuple):
    call: str  # the call's label
    strings: tuple[SplitString, ...]


class StringsSplit(NamedTuple):
    """A turn's string arguments that were streamed in pieces, per call, in order."""

    calls: tuple[SplitCall, ...]


class MissingTerminalPart(NamedTuple):
    """A streamed call ended on a part without willContinue instead of the empty functionCall part."""

    call: str  # the call's label


class EventNameMismatch(NamedTuple):
    """The SSE ``event:`` name and the payload's own type disagree."""

    event_name: str
    data_type: str
    field: str = "data.type"  # the payload field that names its type


class EmptyStartUnion(NamedTuple):
    """Bedrock: a contentBlockStart whose ``start`` union is ``{}``."""

    block: Any  # the contentBlockIndex


class PromptBlocked(NamedTuple):
    """Gemini: ``promptFeedback.blockReason`` and its optional message."""

    reason: str
    detail: str | None


class SequenceIrregular(NamedTuple):
    """Responses: an event's ``sequence_number`` is missing, skips ahead, or goes back."""

    what: Literal["missing", "gap", "disorder"]
    event: str  # the event type
    number: int | None  # its sequence_number (None when missing)
    previous: int | None  # the last sequence_number before it


class OutputItem(NamedTuple):
    """Responses: an output item as findings name it."""

    item_type: str
    is_call: bool
    name: str | None
    call_id: str | None


class ArgumentsWithoutDeltas(NamedTuple):
    """Responses: a streaming call's input came whole in its ``.done`` event (``event``), no delta before it."""

    item: OutputItem
    size: int  # characters of input
    event: str


class HelperLogWithoutDeltas(NamedTuple):
    """An SDK helper-stream log without the raw delta events: ``event`` is the helper's event that showed it,
    ``raw`` the raw event the log lacks (``content_block_delta``, openai-python's ``chunk``)."""

    event: str
    raw: str = "content_block_delta"


class ItemIdRotated(NamedTuple):
    """Responses: an event names an output item by another id than ``output_item.added`` gave it."""

    item: OutputItem
    output_index: int
    added: str  # the id it was added with
    event: str  # the event that names it otherwise
    named: str  # the id that event uses


class ToolCallRejected(NamedTuple):
    """The API ended the turn with a reason that says it rejected the model's tool call."""

    field: str  # finishReason, stopReason …
    reason: str
    detail: str | None = None  # the API's own message, when it sent one


class ToolInputError(NamedTuple):
    """AI SDK: the server rejected the input the model produced (``tool-input-error``)."""

    tool: str
    call_id: str
    error: str | None  # errorText as sent


class ThoughtSignatures(NamedTuple):
    """Gemini: which function calls of a turn carry a thoughtSignature.

    ``first_signed`` False: the first call has none although ``signed`` (or another part) does;
    True: the first call has one and ``unsigned`` later calls have none.
    """

    first: str  # the first call's label
    first_signed: bool
    signed: str | None = None  # the first call that carries one, when the first does not
    unsigned: tuple[str, ...] = ()


class EndOfStreamMissing(NamedTuple):
    """OpenAI Chat: every choice finished (``reasons``) but the end-of-stream sentinel never came."""

    reasons: tuple[str, ...]
    next_completion: str | None = None  # the id of a completion that began instead; None: the capture ends
    next_line: int | None = None
    after_usage: bool = False  # the last chunk was the usage chunk (choices: []) that closes the request


class EndOfStreamInexact(NamedTuple):
    """OpenAI Chat: the end-of-stream sentinel came with whitespace around it (``data: [DONE] ``), which
    the adapter accepts as the end; ``data`` is the event's data as the server wrote it."""

    data: str


class FinishReasonMissing(NamedTuple):
    """OpenAI Chat: a choice ended with [DONE] and no finish_reason after its calls."""

    choice: int
    calls: int
    at_log_end: bool = False  # it ended with a chunk log that cannot hold [DONE], not at a [DONE]
    at_usage_end: bool = False  # it ended with the usage chunk (choices: []) and no [DONE]


class CallAfterFinishReason(NamedTuple):
    """OpenAI Chat: a call started in a choice after that choice's finish_reason."""

    tool: str | None
    call_id: str | None
    choice: int
    reason: str
    reason_line: int | None


class CutBeforeData(NamedTuple):
    """An SSE capture ends inside an event before a whole ``data:`` line of it, so no frame was made."""

    line: int  # the capture's last line, 1-based
    mid_line: bool  # the capture stops inside that line (no line end after its bytes)
    comment: bool  # that line is a comment and no field of an event came before it: no event was open
    start: str = ""  # mid_line: the cut line's first characters (at most 40), as received
    size: int = 0  # mid_line: the cut line's length in bytes


#: What ``InputProblem.facts`` holds (or None): one of the records above.
ProblemFacts = Union[
    PartialArgUnplaceable,
    StringsSplit,
    MissingTerminalPart,
    EventNameMismatch,
    EmptyStartUnion,
    PromptBlocked,
    SequenceIrregular,
    ArgumentsWithoutDeltas,
    HelperLogWithoutDeltas,
    ItemIdRotated,
    ToolCallRejected,
    ToolInputError,
    ThoughtSignatures,
    EndOfStreamMissing,
    EndOfStreamInexact,
    FinishReasonMissing,
    CallAfterFinishReason,
    CutBeforeData,
]
