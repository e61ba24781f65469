"""The neutral events every provider adapter emits, whatever the provider's own vocabulary.

Events are small slotted classes built once per frame on the hot path; treat them as immutable.
Each carries the ``Pos`` of the frame it came from, so positions flow to every finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Hashable, Literal

from stream_doctor.capture.base import Pos
from stream_doctor.capture.problem_facts import ProblemFacts
from stream_doctor.values.findings import Location

if TYPE_CHECKING:
    from stream_doctor.capture.runs import Positions

#: A field the provider did not send (``None`` can be a real value of a tool input).
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()

#: Fields a frame carried with a type its protocol does not allow, as ``(name, value)`` pairs in the
#: order sent (``(("id", 7),)`` for a numeric call id). The adapter reads each as missing and says so in
#: a Problem event; no rule reads these. They are for the client profiles, whose real library acts on
#: the value itself (keeps a numeric id, indexes its list by a string, takes an object as the arguments).
Wire = tuple[tuple[str, Any], ...]


@dataclass(slots=True)
class MessageStart:
    pos: Pos
    message_id: str | None
    model: str | None = None


@dataclass(slots=True)
class BlockStart:
    """A content block that is not a tool call (text, thinking, a server tool's result …)."""

    pos: Pos
    key: Hashable
    index: int | None
    block_type: str
    result_for: str | None = None  # the tool_use_id a server-side result block answers


@dataclass(slots=True)
class ToolStart:
    """A tool call begins. ``start_input`` is what the start event carried (Anthropic: ``{}``)."""

    pos: Pos
    key: Hashable
    index: int | None
    block_type: str
    call_id: str | None
    name: str | None
    start_input: Any = None
    server_side: bool = False
    caller: str | None = None  # programmatic tool calling: the server tool that made this call
    id_optional: bool = False  # the protocol makes the id optional (Gemini FunctionCall.id): no id is no stream problem
    input_format: str = "json"  # "text": free-text input (Responses custom tools, apply_patch diffs), never JSON-parsed
    item_id: str | None = None  # Responses: the item's own id (``fc_…``), which is not the call id
    choice: int | None = None  # Chat Completions with n > 1: the choice it belongs to (ids are unique per choice)
    signed: bool = False  # Gemini: the functionCall part carried a thoughtSignature
    # Chat Completions: the entry's ``type`` as sent (None: absent or null). For the client profiles only
    # (openai-python fires no arguments.done unless it is "function"); no rule reads it.
    wire_type: str | None = "function"
    wire: Wire = ()


@dataclass(slots=True)
class ArgsDelta:
    """A fragment of a tool call's argument text.

    ``key`` None means the fragment carried no correlator (no index, no id): the accumulator
    attributes it to the latest open call and records that it had to. ``call_id`` and ``name`` are
    what this fragment itself carried, for providers that repeat them (or change them) mid-call.
    """

    pos: Pos
    key: Hashable
    fragment: str
    delta_type: str
    call_id: str | None = None
    name: str | None = None
    without_function: bool = False  # OpenAI Chat: a ``tool_calls[]`` entry with no ``function`` (rare; clients differ)
    wire: Wire = ()  # fields of the wrong type, as ``ToolStart.wire``


@dataclass(slots=True)
class ArgsRun:
    """Consecutive fragments of one call's arguments, as an adapter's hot path batches them.

    Exactly one ``ArgsDelta(position, key, fragment, delta_type)`` per fragment, none with an id
    or a name of its own, in order. Only ``translate(frames, release=True)`` (whose events go
    straight to an accumulator) yields it: no event object, no yield and no accumulator step per
    fragment. ``feed`` and ``translate`` without ``release`` never do, so a timeline, a client
    profile or a test sees one ArgsDelta per fragment.

    ``positions``: a list of ``Pos``, or the same as ``capture.runs.Positions`` (flat triples, and a
    ``capture.runs.FrameRun``'s computed from its fragments when read).
    """

    key: Hashable
    positions: list[Pos] | Positions
    fragments: list[str]
    delta_type: str

    @property
    def pos(self) -> Pos:
        """Where its last fragment was (what the accumulator remembers as the latest position)."""
        positions = self.positions
        if type(positions) is list:
            return positions[-1]
        return positions.last()  # type: ignore[union-attr]

    def pos_list(self) -> list[Pos]:
        """``positions`` as a list of ``Pos``."""
        positions = self.positions
        if type(positions) is list:
            return positions
        flat = positions.flat(self.fragments)  # type: ignore[union-attr]
        return [_new_tuple(Pos, flat[at : at + 3]) for at in range(0, len(flat), 3)]

    def deltas(self) -> list[ArgsDelta]:
        """The fragments as the ArgsDelta events they stand for."""
        key, delta_type = self.key, self.delta_type
        pairs = zip(self.pos_list(), self.fragments, strict=True)
        return [ArgsDelta(pos, key, fragment, delta_type) for pos, fragment in pairs]


_new_tuple = tuple.__new__


@dataclass(slots=True)
class BlockDelta:
    """A fragment of a non-tool block (text, thinking, signature, citation); only its size is kept."""

    pos: Pos
    key: Hashable
    delta_type: str
    size: int


@dataclass(slots=True)
class BlockStop:
    """The protocol's own completion signal for one block (Anthropic ``content_block_stop``).

    Some providers restate the call's whole arguments when it completes (OpenAI Responses
    ``function_call_arguments.done``: text; the AI SDK's ``tool-input-available``: a parsed value).
    The accumulator uses them when no fragment came, and flags them when they disagree.
    """

    pos: Pos
    key: Hashable
    final_arguments: str | None = None
    final_input: Any = MISSING


@dataclass(slots=True)
class CallSummary:
    """A later event that restates a whole call (Responses ``output_item.done``, ``response.completed``).

    It completes nothing: the accumulator matches it to the call it restates (by key, then id) and
    records a summary that disagrees with the streamed call, or restates a call never streamed.
    """

    pos: Pos
    key: Hashable
    call_id: str | None
    name: str | None
    arguments: str | None = None
    input: Any = MISSING


@dataclass(slots=True)
class HelperSnapshot:
    """What an SDK stream helper said it had accumulated for a call at this point of its log.

    The Anthropic SDK's ``input_json.snapshot`` and the ``content_block`` of its
    ``content_block_stop``, the OpenAI SDK's ``arguments``/``parsed_arguments``: the helper
    restates the call so far, and the accumulator checks it against the fragments joined up to
    here. ``field`` names where it came from (``input_json.snapshot`` …); ``arguments`` is a
    text snapshot, ``input`` a parsed one (``MISSING`` when the helper gave none).

    For a block that is not a call (the Anthropic SDK's ``text``/``thinking``/``signature``
    snapshots, the OpenAI SDK's ``content.delta`` snapshot), ``arguments`` is the helper's text so
    far and the adapter, which saw the wire deltas, gives what they carried up to here: ``length``
    (their characters) and ``tail`` (the latest delta). The accumulator keeps no block text.
    """

    pos: Pos
    key: Hashable
    field: str
    arguments: str | None = None
    input: Any = MISSING
    final: bool = False  # the helper's snapshot of the completed call (``content_block_stop``, ``….done``)
    length: int | None = None  # a non-call block: characters its deltas carried so far
    tail: str | None = None  # a non-call block: its latest delta, which the snapshot must end with


FinishCategory = Literal["tool_calls", "end", "length", "pause", "refusal", "filter", "error", "other"]


@dataclass(slots=True)
class Finish:
    """The turn's stop reason: the provider's own word, and what it means in every provider's terms.

    ``category``: ``tool_calls`` (the turn waits for tool results), ``end`` (a normal end),
    ``length`` (cut by a token or context limit), ``pause``, ``refusal``, ``filter`` (content
    filtered), ``error``, ``other``.
    """

    pos: Pos
    reason: str | None
    category: FinishCategory = "other"
    # Chat Completions: the choices no chunk gave a ``delta.role`` so far (``MessageStop.roleless``; a
    # stream cut after its finish_reason has no MessageStop a client profile is fed)
    roleless: tuple[int, ...] = ()
    # Anthropic: the message_delta carried a non-empty ``context_management`` (a beta response; the
    # non-beta SDK types keep it as a plain dict). For the client profiles only; no rule reads it.
    context_management: bool = False


@dataclass(slots=True)
class MessageStop:
    pos: Pos
    cause: str | None = None  # why calls still open end here, when the protocol says (AI SDK ``reset-step``)
    # Chat Completions: the choices no chunk gave a ``delta.role`` (openai-node's finalizeChatCompletion
    # throws "missing role for choice N"). For the client profiles only; no rule reads it.
    roleless: tuple[int, ...] = ()


@dataclass(slots=True)
class StreamError:
    """An error the provider sent inside the stream, after the HTTP status was already 200."""

    pos: Pos
    error_type: str | None
    message: str | None


@dataclass(slots=True)
class KeepAlive:
    """A frame that carries nothing but liveness (Anthropic ``ping``)."""

    pos: Pos
    what: str
    #: Chat Completions: the choices, each finished already, that this chunk carries again with nothing the
    #: adapter reads (Azure's asynchronous content-filter results): a client's per-chunk loop over
    #: ``chunk.choices`` still visits them (openai-node ``ChatCompletionStream#addChunk`` fires the current
    #: call's done event there)
    choices: tuple[int, ...] = ()


@dataclass(slots=True)
class Unknown:
    """A well-formed event the adapter does not know. Counted and reported, never dropped."""

    pos: Pos
    event_type: str


@dataclass(slots=True)
class Malformed:
    """A frame the adapter could not use at all (not JSON, not an object, no type).

    ``fragment``: argument text the frame carried that no call can be found for (an Anthropic
    ``input_json_delta`` without an integer ``index``). The accumulator ignores it; client profiles
    whose library still appends it somewhere read it.
    """

    pos: Pos
    reason: str
    fragment: str | None = None
    wire: Wire = ()  # fields of the wrong type, as ``ToolStart.wire`` (an Anthropic delta's string ``index``)


@dataclass(slots=True)
class Problem:
    """Something wrong with a frame that the adapter noticed but could still use.

    ``facts``: what was seen, for the rule that words this kind itself (then ``message`` is empty).
    """

    pos: Pos
    kind: str
    message: str
    facts: ProblemFacts | None = None


@dataclass(slots=True)
class Execution:
    """What the application did: it ran a tool with this input (an envelope ``execute`` record)."""

    pos: Pos
    call_id: str | None
    name: str | None
    input: Any
    origin: Location | None = None  # given after the fact (--executed, --executions): where it was given


@dataclass(slots=True)
class Request:
    """The request body that was sent (an envelope ``request`` record)."""

    pos: Pos
    body: Any


Event = (
    MessageStart
    | BlockStart
    | ToolStart
    | ArgsDelta
    | ArgsRun
    | BlockDelta
    | BlockStop
    | CallSummary
    | HelperSnapshot
    | Finish
    | MessageStop
    | StreamError
    | KeepAlive
    | Unknown
    | Malformed
    | Problem
    | Execution
    | Request
)
