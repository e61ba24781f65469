"""The accumulated stream: every message, content block and tool call the capture holds, reassembled.

Built once by the accumulator and never changed afterwards; rules only read it. Its classes are
``util.records.record``s: frozen to mypy, which CI runs, and made by plain slot stores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Literal, NamedTuple, Sequence

from stream_doctor.accumulate.irregularities import StreamProblem
from stream_doctor.accumulate.spill import StoredArguments
from stream_doctor.capture.base import InputProblem, Pos
from stream_doctor.util.records import record
from stream_doctor.values.protocol import NEUTRAL_WORDS, ProtocolFacts

if TYPE_CHECKING:
    # records a clean stream does not make, in modules imported where they are made
    from stream_doctor.accumulate.executions import ExecutionRecord
    from stream_doctor.accumulate.parse_failure import ParseFailure
    from stream_doctor.accumulate.pending import Clock
    from stream_doctor.accumulate.stream_error import ErrorInfo

CallStatus = Literal["complete", "abandoned"]


class Fragment(NamedTuple):
    pos: Pos
    text: str


@record
class ToolCall:
    """One tool call, from its start event to its completion (or to where it was abandoned)."""

    ordinal: int  # 0-based, across the whole capture
    message: int  # 0-based message the call belongs to
    key: Hashable
    index: int | None
    block_type: str
    call_id: str | None
    name: str | None
    server_side: bool
    caller: str | None
    started: Pos
    ended: Pos | None  # the completion event; None when the call never completed
    status: CallStatus
    abandon_cause: str | None  # "stream-cut" | "error-event" | "max-tokens" | "new-message" …
    abandon_pos: Pos | None
    stored: StoredArguments  # the argument text, fragments and positions, in the replay's store (accumulate/spill.py)
    parse_failure: ParseFailure | None
    start_input: Any
    complete_value_at: int | None  # fragment index at which the buffer first held a whole JSON value
    input_source: str  # for humans: "start placeholder {} → 7 input_json_delta fragments"
    input_format: str = "json"  # "text": free-text input kept as a string in ``arguments``, never JSON-parsed
    item_id: str | None = None  # Responses: the output item's id (``fc_…``), distinct from the call id
    signed: bool = False  # Gemini: its functionCall part carried a thoughtSignature

    @property
    def raw_arguments(self) -> str:
        """The argument text as streamed (the fragments joined)."""
        stored = self.stored
        return stored.store.raw(stored.record)

    @property
    def arguments(self) -> Any:
        """The parsed value; None when parsing failed or the call never completed. Parsed again at
        each reading (nothing parsed is kept per call), except a value given whole in an event."""
        if self.parse_failure is not None:
            return None
        stored = self.stored
        return stored.store.arguments(stored.record, self.input_format == "text")

    @property
    def fragment_texts(self) -> Sequence[str]:
        """The argument fragments, read like a tuple (kept compactly: accumulate/fragments.py)."""
        stored = self.stored
        return stored.store.record(stored.record)[1]

    @property
    def fragment_positions(self) -> Sequence[Pos]:
        stored = self.stored
        return stored.store.record(stored.record)[2]

    @property
    def fragments(self) -> tuple[Fragment, ...]:
        """Each fragment with its position; built on demand (a call can have 100,000 of them)."""
        _, texts, positions = self.stored.store.record(self.stored.record)
        return tuple(map(Fragment, positions, texts))

    @property
    def fragment_count(self) -> int:
        return self.stored.store.count(self.stored.record)

    @property
    def byte_count(self) -> int:
        return self.stored.store.byte_count(self.stored.record)

    @property
    def label(self) -> str:
        return f"{self.name or '?'} ({self.call_id or 'no id'})"


@record
class Block:
    """A content block that is not a tool call, kept so structure rules can see the whole message."""

    message: int
    key: Hashable
    index: int | None
    block_type: str
    started: Pos
    ended: Pos | None
    deltas: int
    size: int
    result_for: str | None = None


@record
class Message:
    index: int
    message_id: str | None
    model: str | None
    started: Pos | None  # None when content arrived without a message start
    stopped: Pos | None
    stop_reason: str | None
    stop_category: str | None  # the neutral category of stop_reason (events.FinishCategory)
    stop_reason_pos: Pos | None
    error: ErrorInfo | None
    calls: tuple[int, ...]  # ordinals into AccumulatedStream.calls
    blocks: tuple[Block, ...]


@record
class CaptureInfo:
    path: str
    container: str
    compressed: str | None
    provider: str
    provider_forced: bool
    size: int
    frames: int
    duration: float | None
    header: dict[str, Any] | None
    interaction: int | None = None  # HAR/cassette, envelope of several turns: the interaction it answers
    protocol: ProtocolFacts = ProtocolFacts(
        NEUTRAL_WORDS
    )  # what the provider's protocol promises, as its adapter states it
    clock: Clock | None = None  # the times of the frames the timing questions need, when the capture has times


@record
class AccumulatedStream:
    capture: CaptureInfo
    messages: tuple[Message, ...]
    calls: tuple[ToolCall, ...]
    executions: tuple[ExecutionRecord, ...]
    requests: tuple[Any, ...]
    stream_problems: tuple[StreamProblem, ...]
    problems: tuple[InputProblem, ...]  # from the capture reader and the adapter
    event_counts: dict[str, int]  # provider event type → how many
    unknown_events: dict[str, int]
    last_pos: Pos | None
    ended_cleanly: bool  # the capture's last frame was whole
    request_pos: Pos | None = None  # where the last of ``requests`` was recorded
