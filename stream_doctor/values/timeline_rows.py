"""The rows of a replay's timeline (``values/timeline.py``), made as its events are read: only for
``--timeline``, the HTML report and ``keep_events`` (``engine/stages.py`` imports this module then).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable

from stream_doctor.values.events import ArgsDelta, ArgsRun, BlockDelta
from stream_doctor.values.timeline import MAX_ROWS, Timeline

if TYPE_CHECKING:
    from stream_doctor.capture.base import Frame
    from stream_doctor.values.events import Event


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the timeline: an event, or a run of deltas to one block (``count`` of them)."""

    interaction: int | None  # HAR/cassette: the interaction the events belong to
    first: int  # the first event's number (``Pos.number``) and line
    first_line: int
    last: int  # the last event's number and line (the first's, for one event)
    last_line: int
    count: int
    size: int  # characters the run's deltas carry
    frame_type: str  # the first frame's type, as the wire names it (``content_block_delta``, ``[request]``)
    detail: str  # what the first event says (index, delta type, call id, name, reason …), "" when nothing
    event: str  # the first neutral event's class name (``ArgsDelta``, ``ToolStart`` …)


class Budget:
    """How many rows the turns of one replay may still keep (they share MAX_ROWS)."""

    def __init__(self, rows: int | None = None) -> None:
        self.left = MAX_ROWS if rows is None else rows


class Rows:
    """One turn's rows, made as its events are read."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.rows: list[Row] = []
        self.hidden = 0
        self._open: list[object] | None = None  # the row being made: its fields, then its fold key
        self._fold: Hashable = None

    def add(self, frame: Frame, event: Event) -> None:
        fold = _fold_key(frame, event)
        pos = frame.pos
        current = self._open
        if current is not None and fold is not None and fold == self._fold:
            current[3] = pos.number
            current[4] = pos.line
            current[5] += 1  # type: ignore[operator]
            current[6] += _size(event)  # type: ignore[operator]
            return
        self._close()
        self._fold = fold
        self._open = [
            frame.interaction,
            pos.number,
            pos.line,
            pos.number,
            pos.line,
            1,
            _size(event),
            frame_type(frame),
            detail(event),
            type(event).__name__,
        ]

    def timeline(self) -> Timeline:
        self._close()
        return Timeline(tuple(self.rows), self.hidden)

    def _close(self) -> None:
        if self._open is None:
            return
        if self.budget.left > 0:
            self.budget.left -= 1
            self.rows.append(Row(*self._open))  # type: ignore[arg-type]
        else:
            self.hidden += 1
        self._open = None


def of_events(events: tuple[tuple[Frame, Event], ...]) -> Timeline:
    """The timeline of events kept whole (``keep_events``)."""
    rows = Rows(Budget())
    for frame, event in events:
        rows.add(frame, event)
    return rows.timeline()


def _fold_key(frame: Frame, event: Event) -> tuple[int | None, str, Hashable, str] | None:
    if isinstance(event, ArgsDelta):
        return (frame.interaction, "args", event.key, event.delta_type)
    if isinstance(event, BlockDelta):
        return (frame.interaction, "block", event.key, event.delta_type)
    return None


def _size(event: Event) -> int:
    if isinstance(event, ArgsDelta):
        return len(event.fragment)
    if isinstance(event, ArgsRun):
        return sum(len(fragment) for fragment in event.fragments)
    size = getattr(event, "size", 0)
    return size if isinstance(size, int) else 0


_TYPES: dict[str, str] = {}  # one string per frame type, not one per row


def frame_type(frame: Frame) -> str:
    if frame.kind != "event":
        return f"[{frame.kind}]"
    value = frame.value
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        name = str(value["type"])
    else:
        name = frame.event or "(frame)"
    return _TYPES.setdefault(name, name) if len(_TYPES) < 1000 else name


def detail(event: Event) -> str:
    name = type(event).__name__
    key = getattr(event, "key", None)
    parts = [] if key is None else [f"index {key}"]
    for attr in ("delta_type", "block_type", "call_id", "name", "reason", "error_type", "event_type"):
        value = getattr(event, attr, None)
        if value:
            parts.append(str(value))
    if name in ("Malformed", "Problem"):
        parts.append(str(getattr(event, "reason", None) or getattr(event, "message", "")))
    return "  " + " ".join(parts) if parts else ""
