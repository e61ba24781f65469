"""The protocol irregularities the accumulator records while stitching: one record per kind.

Each record is a plain tuple of facts (positions, ordinals, ids, the text a fragment carried), never
prose: the SD4xx and SD5xx rule that reports a kind says what it means. Every record starts with
``pos`` and ``message`` (the 0-based message the accumulator was in, None before any) and ends
with ``kind``, the kind's stable name, which is part of the value: two kinds with the same facts
are not equal. They are ``NamedTuple``s, not dataclasses: a replay imports all of them, and a
named tuple costs a fraction of a dataclass to create (``docs/performance.md``, "Start-up").
"""

from __future__ import annotations

from typing import Any, Hashable, Literal, NamedTuple, Union

from stream_doctor.capture.base import Pos

# -- messages --------------------------------------------------------------------------------


class NoMessageStart(NamedTuple):
    pos: Pos
    message: int | None
    kind: Literal["no-message-start"] = "no-message-start"


class EventAfterMessageStop(NamedTuple):
    pos: Pos
    message: int | None
    stopped: Pos
    kind: Literal["event-after-message-stop"] = "event-after-message-stop"


class MessageRestarted(NamedTuple):
    pos: Pos
    message: int | None
    previous: Pos | None  # where the message still open began
    open_message: int  # its 0-based index
    kind: Literal["message-restarted"] = "message-restarted"


class StopReasonChanged(NamedTuple):
    pos: Pos
    message: int | None
    before: str | None
    after: str | None
    kind: Literal["stop-reason-changed"] = "stop-reason-changed"


# -- blocks ----------------------------------------------------------------------------------


class IndexReused(NamedTuple):
    pos: Pos
    message: int | None
    key: Hashable
    previous: Pos
    kind: Literal["index-reused"] = "index-reused"


class IndexGap(NamedTuple):
    pos: Pos
    message: int | None
    key: Hashable
    index: int  # type: ignore[assignment]  # shadows tuple.index, which no one calls on a record
    expected: int
    kind: Literal["index-gap"] = "index-gap"


class IndexShared(NamedTuple):
    """A call started on an index another open call of the message still holds."""

    pos: Pos
    message: int | None
    index: int  # type: ignore[assignment]  # shadows tuple.index
    first: int  # ordinal of the call already open there
    first_id: str | None
    call_id: str | None  # the id the new call started with
    kind: Literal["index-shared"] = "index-shared"


class DuplicateCallId(NamedTuple):
    pos: Pos
    message: int | None
    call_id: str
    first: Pos
    kind: Literal["duplicate-call-id"] = "duplicate-call-id"


# A delta or stop that could not go to its block (the four records of ``BlockEvent``): ``key`` the
# block's key, ``event`` the delta type or "stop", ``size`` the characters the delta carried (0 for a
# stop), ``text`` the argument text it carried ("" for content deltas and stops).


class UnknownBlock(NamedTuple):
    pos: Pos
    message: int | None
    key: Hashable
    event: str
    size: int
    text: str
    kind: Literal["unknown-block"] = "unknown-block"


class AfterBlockStop(NamedTuple):
    pos: Pos
    message: int | None
    key: Hashable
    event: str
    size: int
    text: str
    stopped: Pos
    block_type: str = "tool_use"  # the stopped block's type: a tool call's, or text/thinking
    tool: bool = True  # the stopped block is a tool call
    kind: Literal["after-block-stop"] = "after-block-stop"


class DeltaTypeMismatch(NamedTuple):
    pos: Pos
    message: int | None
    key: Hashable
    event: str
    size: int
    text: str
    block_type: str
    kind: Literal["delta-type-mismatch"] = "delta-type-mismatch"


class UncorrelatedFragment(NamedTuple):
    """A fragment with neither index nor id; ``attributed``: the open call it was given to, if any."""

    pos: Pos
    message: int | None
    key: Hashable
    event: str
    size: int
    text: str
    attributed: int | None
    kind: Literal["uncorrelated-fragment"] = "uncorrelated-fragment"


# -- a call's identity -----------------------------------------------------------------------


class CallWithoutIdOrName(NamedTuple):
    pos: Pos
    message: int | None
    call: int
    call_id: str | None
    name: str | None
    kind: Literal["call-without-id-or-name"] = "call-without-id-or-name"


class IdLate(NamedTuple):
    pos: Pos
    message: int | None
    call: int
    call_id: str
    kind: Literal["id-late"] = "id-late"


class IdChanged(NamedTuple):
    pos: Pos
    message: int | None
    call: int
    before: str
    after: str
    kind: Literal["id-changed"] = "id-changed"


class IdRepeated(NamedTuple):
    pos: Pos
    message: int | None
    call: int
    call_id: str | None
    count: int  # type: ignore[assignment]  # fragments that carried it, the first included (shadows tuple.count)
    kind: Literal["id-repeated"] = "id-repeated"


class NameLate(NamedTuple):
    pos: Pos
    message: int | None
    call: int
    name: str
    kind: Literal["name-late"] = "name-late"


class NameBlank(NamedTuple):
    pos: Pos
    message: int | None
    call: int
    name: str | None  # the name it had
    kind: Literal["name-blank"] = "name-blank"


class NameChanged(NamedTuple):
    pos: Pos
    message: int | None
    call: int
    before: str
    after: str
    kind: Literal["name-changed"] = "name-changed"


class NameRepeated(NamedTuple):
    pos: Pos
    message: int | None
    call: int
    name: str | None
    count: int  # type: ignore[assignment]  # shadows tuple.count
    kind: Literal["name-repeated"] = "name-repeated"


# -- restatements ----------------------------------------------------------------------------


class FinalDiffers(NamedTuple):
    """The completion event restated the input (text or a value) otherwise than the fragments joined."""

    pos: Pos
    message: int | None
    call: int
    streamed: str
    final: Any
    kind: Literal["final-differs"] = "final-differs"


# A terminal event restating a call (the four records of ``Summary``): its ``call_id``, ``name`` and
# ``arguments`` (``MISSING`` when not JSON).


class SummaryOnlyCall(NamedTuple):
    pos: Pos
    message: int | None
    call_id: str | None
    name: str | None
    arguments: Any
    kind: Literal["summary-only-call"] = "summary-only-call"


class SummaryDuplicate(NamedTuple):
    pos: Pos
    message: int | None
    call_id: str | None
    name: str | None
    arguments: Any
    call: int  # the streamed call it repeats under another id
    kind: Literal["summary-duplicate"] = "summary-duplicate"


class SummaryBeforeComplete(NamedTuple):
    pos: Pos
    message: int | None
    call_id: str | None
    name: str | None
    arguments: Any
    call: int
    kind: Literal["summary-before-complete"] = "summary-before-complete"


class SummaryDiffers(NamedTuple):
    pos: Pos
    message: int | None
    call_id: str | None
    name: str | None
    arguments: Any
    call: int
    field: Literal["id", "name", "arguments"]
    streamed: Any  # what the stream had for that field
    kind: Literal["summary-differs"] = "summary-differs"


class HelperSnapshotDiffers(NamedTuple):
    """An SDK stream helper's snapshot of a call disagrees with the fragments joined up to it.

    Only the first disagreement per call or block is recorded (every later snapshot usually repeats it).
    """

    pos: Pos
    message: int | None
    call: int | None  # None: a block that is not a call (text, thinking)
    field: str
    reported: Any  # the helper's snapshot: text, or a parsed value
    accumulated: str  # a call: its fragments joined up to this point; another block: its latest delta
    block_type: str | None = None  # another block: its type, index, where it started, its length so far
    block_index: int | None = None
    started: Pos | None = None
    length: int | None = None
    kind: Literal["helper-snapshot-differs"] = "helper-snapshot-differs"


BlockEvent = Union[UnknownBlock, AfterBlockStop, DeltaTypeMismatch, UncorrelatedFragment]
Summary = Union[SummaryOnlyCall, SummaryDuplicate, SummaryBeforeComplete, SummaryDiffers]
StreamProblem = Union[
    NoMessageStart,
    EventAfterMessageStop,
    MessageRestarted,
    StopReasonChanged,
    IndexReused,
    IndexGap,
    IndexShared,
    DuplicateCallId,
    BlockEvent,
    CallWithoutIdOrName,
    IdLate,
    IdChanged,
    IdRepeated,
    NameLate,
    NameBlank,
    NameChanged,
    NameRepeated,
    FinalDiffers,
    Summary,
    HelperSnapshotDiffers,
]
