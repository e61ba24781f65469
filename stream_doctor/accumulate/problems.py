"""The protocol irregularities the accumulator records while stitching: one frozen record per kind.

Each record holds facts (positions, ordinals, ids, the text a fragment carried), never prose: the
SD4xx and SD5xx rule that reports a kind says what it means. ``kind`` is the kind's stable name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Hashable, Literal

from stream_doctor.capture.base import Pos


@dataclass(frozen=True, slots=True)
class StreamProblem:
    kind: ClassVar[str]

    pos: Pos
    message: int | None  # 0-based message the accumulator was in, None before any


# -- messages --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NoMessageStart(StreamProblem):
    kind: ClassVar[str] = "no-message-start"


@dataclass(frozen=True, slots=True)
class EventAfterMessageStop(StreamProblem):
    kind: ClassVar[str] = "event-after-message-stop"
    stopped: Pos


@dataclass(frozen=True, slots=True)
class MessageRestarted(StreamProblem):
    kind: ClassVar[str] = "message-restarted"
    previous: Pos | None  # where the message still open began
    open_message: int  # its 0-based index


@dataclass(frozen=True, slots=True)
class StopReasonChanged(StreamProblem):
    kind: ClassVar[str] = "stop-reason-changed"
    before: str | None
    after: str | None


# -- blocks ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexReused(StreamProblem):
    kind: ClassVar[str] = "index-reused"
    key: Hashable
    previous: Pos


@dataclass(frozen=True, slots=True)
class IndexGap(StreamProblem):
    kind: ClassVar[str] = "index-gap"
    key: Hashable
    index: int
    expected: int


@dataclass(frozen=True, slots=True)
class IndexShared(StreamProblem):
    """A call started on an index another open call of the message still holds."""

    kind: ClassVar[str] = "index-shared"
    index: int
    first: int  # ordinal of the call already open there
    first_id: str | None
    call_id: str | None  # the id the new call started with


@dataclass(frozen=True, slots=True)
class DuplicateCallId(StreamProblem):
    kind: ClassVar[str] = "duplicate-call-id"
    call_id: str
    first: Pos


@dataclass(frozen=True, slots=True)
class BlockEvent(StreamProblem):
    """A delta or stop that could not go to its block; ``event`` is the delta type or ``"stop"``."""

    kind: ClassVar[str] = "block-event"
    key: Hashable
    event: str
    size: int  # characters the delta carried (0 for a stop)
    text: str  # the argument text it carried ("" for content deltas and stops)


@dataclass(frozen=True, slots=True)
class UnknownBlock(BlockEvent):
    kind: ClassVar[str] = "unknown-block"


@dataclass(frozen=True, slots=True)
class AfterBlockStop(BlockEvent):
    kind: ClassVar[str] = "after-block-stop"
    stopped: Pos
    block_type: str = "tool_use"  # the stopped block's type: a tool call's, or text/thinking
    tool: bool = True  # the stopped block is a tool call


@dataclass(frozen=True, slots=True)
class DeltaTypeMismatch(BlockEvent):
    kind: ClassVar[str] = "delta-type-mismatch"
    block_type: str


@dataclass(frozen=True, slots=True)
class UncorrelatedFragment(BlockEvent):
    """A fragment with neither index nor id; ``attributed``: the open call it was given to, if any."""

    kind: ClassVar[str] = "uncorrelated-fragment"
    attributed: int | None


# -- a call's identity -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallWithoutIdOrName(StreamProblem):
    kind: ClassVar[str] = "call-without-id-or-name"
    call: int
    call_id: str | None
    name: str | None


@dataclass(frozen=True, slots=True)
class IdLate(StreamProblem):
    kind: ClassVar[str] = "id-late"
    call: int
    call_id: str


@dataclass(frozen=True, slots=True)
class IdChanged(StreamProblem):
    kind: ClassVar[str] = "id-changed"
    call: int
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class IdRepeated(StreamProblem):
    kind: ClassVar[str] = "id-repeated"
    call: int
    call_id: str | None
    count: int  # fragments that carried it, the first included


@dataclass(frozen=True, slots=True)
class NameLate(StreamProblem):
    kind: ClassVar[str] = "name-late"
    call: int
    name: str


@dataclass(frozen=True, slots=True)
class NameBlank(StreamProblem):
    kind: ClassVar[str] = "name-blank"
    call: int
    name: str | None  # the name it had


@dataclass(frozen=True, slots=True)
class NameChanged(StreamProblem):
    kind: ClassVar[str] = "name-changed"
    call: int
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class NameRepeated(StreamProblem):
    kind: ClassVar[str] = "name-repeated"
    call: int
    name: str | None
    count: int


# -- restatements ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FinalDiffers(StreamProblem):
    """The completion event restated the input (text or a value) otherwise than the fragments joined."""

    kind: ClassVar[str] = "final-differs"
    call: int
    streamed: str
    final: Any


@dataclass(frozen=True, slots=True)
class Summary(StreamProblem):
    """A terminal event restating a call: its id, name and input (``MISSING`` when not JSON)."""

    kind: ClassVar[str] = "summary"
    call_id: str | None
    name: str | None
    arguments: Any


@dataclass(frozen=True, slots=True)
class SummaryOnlyCall(Summary):
    kind: ClassVar[str] = "summary-only-call"


@dataclass(frozen=True, slots=True)
class SummaryDuplicate(Summary):
    kind: ClassVar[str] = "summary-duplicate"
    call: int  # the streamed call it repeats under another id


@dataclass(frozen=True, slots=True)
class SummaryBeforeComplete(Summary):
    kind: ClassVar[str] = "summary-before-complete"
    call: int


@dataclass(frozen=True, slots=True)
class SummaryDiffers(Summary):
    kind: ClassVar[str] = "summary-differs"
    call: int
    field: Literal["id", "name", "arguments"]
    streamed: Any  # what the stream had for that field


@dataclass(frozen=True, slots=True)
class HelperSnapshotDiffers(StreamProblem):
    """An SDK stream helper's snapshot of a call disagrees with the fragments joined up to it.

    Only the first disagreement per call or block is recorded (every later snapshot usually repeats it).
    """

    kind: ClassVar[str] = "helper-snapshot-differs"
    call: int | None  # None: a block that is not a call (text, thinking)
    field: str
    reported: Any  # the helper's snapshot: text, or a parsed value
    accumulated: str  # a call: its fragments joined up to this point; another block: its latest delta
    block_type: str | None = None  # another block: its type, index, where it started, its length so far
    block_index: int | None = None
    started: Pos | None = None
    length: int | None = None
