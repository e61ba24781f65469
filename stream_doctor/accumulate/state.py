"""The accumulator's working state: each message, content block and tool call as far as it has arrived.

``Accumulator`` changes these as events come; when a call completes (or the stream ends) its state
becomes the immutable ``ToolCall`` of ``stream.py``. ``fragments_of`` gives a call's fragments
wherever they are kept (on the state while the call streams, on its ``ToolCall`` once completed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable

from stream_doctor.capture.runs import Positions
from stream_doctor.values.events import MISSING

if TYPE_CHECKING:
    from stream_doctor.accumulate.partial_json import PartialJson
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.accumulate.stream_error import ErrorInfo
    from stream_doctor.capture.base import Pos
    from stream_doctor.values.events import ToolStart


class BlockState:
    """A content block of a message, as far as it has arrived; ``call`` when it is a tool call."""

    __slots__ = (
        "message", "key", "index", "block_type", "started", "ended", "deltas", "size", "result_for", "call",
        "snapshot_differs",
    )  # fmt: skip

    def __init__(self, message: int, key: Hashable, index: int | None, block_type: str, started: Pos) -> None:
        self.message = message
        self.key = key
        self.index = index
        self.block_type = block_type
        self.started = started
        self.ended: Pos | None = None
        self.deltas = 0  # non-call content: how many deltas and characters arrived
        self.size = 0
        self.result_for: str | None = None
        self.call: CallState | None = None
        self.snapshot_differs = False  # a helper's text snapshot of it already disagreed


class CallState:
    """A tool call's own state: its identity, its argument buffers, how it ended."""

    __slots__ = (
        "block", "ordinal", "call_id", "name", "server_side", "caller", "start_input", "id_optional",
        "input_format", "item_id", "signed", "texts", "positions", "delta_type", "abandon_cause", "abandon_pos",
        "id_repeats", "name_repeats", "name_blanked", "final_arguments", "final_input", "final_pos",
        "snapshot_texts", "snapshot_length", "snapshot_tail", "snapshot_blank", "partial", "partial_fed", "done",
    )  # fmt: skip

    def __init__(self, block: BlockState, ordinal: int, start: ToolStart) -> None:
        self.block = block
        self.ordinal = ordinal
        self.call_id = start.call_id
        self.name = start.name
        self.server_side = start.server_side
        self.caller = start.caller
        self.start_input = start.start_input
        self.id_optional = start.id_optional
        self.input_format = start.input_format
        self.item_id = start.item_id
        self.signed = start.signed
        self.texts: list[str] = []  # the argument fragments, joined once at completion
        self.done: ToolCall | None = None  # once completed: the fragments so far are kept there (compactly)
        self.positions = Positions()  # their positions (flat triples but for whole runs, see capture/runs.py)
        self.delta_type = "fragment"
        self.abandon_cause: str | None = None
        self.abandon_pos: Pos | None = None
        self.id_repeats = 0
        self.name_repeats = 0
        self.name_blanked = False
        self.final_arguments: str | None = None  # what the completion event restated, if anything
        self.final_input: Any = MISSING
        self.final_pos: Pos | None = None
        self.snapshot_texts = 0  # how many fragments (and characters) helper snapshots were checked against
        self.snapshot_length = 0
        self.snapshot_tail = ""  # the text the fragments checked last added
        self.snapshot_blank = True  # every fragment checked so far was whitespace
        self.partial: PartialJson | None = None  # the SDKs' partial parse, made at the first parsed snapshot
        self.partial_fed = 0  # fragments it has read


class MessageState:
    """A message as far as it has arrived: its blocks by key and in order, its calls by id, how it stopped."""

    __slots__ = (
        "index", "message_id", "model", "started", "stopped", "stop_reason", "stop_category", "stop_reason_pos",
        "error", "blocks", "order", "ids",
    )  # fmt: skip

    def __init__(self, index: int, message_id: str | None, model: str | None, started: Pos | None) -> None:
        self.index = index
        self.message_id = message_id
        self.model = model
        self.started = started
        self.stopped: Pos | None = None
        self.stop_reason: str | None = None
        self.stop_category: str | None = None
        self.stop_reason_pos: Pos | None = None
        self.error: ErrorInfo | None = None
        self.blocks: dict[Hashable, BlockState] = {}
        self.order: list[BlockState] = []
        self.ids: dict[Hashable, CallState] = {}


def fragments_of(call: CallState) -> tuple[list[str], Positions]:
    """Every fragment of ``call`` and its position: those of its completion, if it completed, and any since."""
    done = call.done
    if done is None:
        return call.texts, call.positions
    texts = [*done.fragment_texts, *call.texts]
    positions = Positions()
    positions.add(list(done.fragment_positions))
    positions.add(call.positions)
    return texts, positions
