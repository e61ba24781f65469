"""How long each tool call was pending, from the time offsets a capture records (envelopes do).

A call is pending from its start event until its completion event; a call that never completes
is pending until its turn ends, and for as long as the client keeps waiting on it after that.
The capture shows how long that was when it goes on after the turn: the application's later
``execute`` records, or the next turn's request. Only the times these questions need are kept
(``Clock``), so a capture of a million events costs a handful of entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall

if TYPE_CHECKING:
    from stream_doctor.capture.base import Pos

#: Seconds a call may stay pending after its turn ended before that is reported (SD306): longer
#: than a client needs to notice the turn is over and act (retry, continue, report the error).
PENDING_LIMIT = 10.0


@dataclass(frozen=True, slots=True)
class Clock:
    """The times (seconds, as the capture records them) of the frames the timing questions below
    need: only those frames' times, so a capture of a million events costs a handful of entries. Made
    here, and imported with this module, only for a capture whose frames carry times."""

    times: Mapping[int, float]  # frame number -> t
    last: float  # the latest time in this turn
    after: float | None  # the time of the capture's next record after this turn (the next request)

    def at(self, pos: Pos | None) -> float | None:
        return None if pos is None else self.times.get(pos.number)


@dataclass(frozen=True, slots=True, eq=False)
class CallTiming:
    started: float | None
    completed: float | None  # None: never completed
    turn_ended: float | None  # when the stream stopped carrying the call (abandoned calls)
    executed: float | None  # the first execution's time
    waited_until: float | None  # abandoned calls: the latest sign of the client after the turn
    waited_for: str | None  # what that sign was: "an execute record", "the next request"

    @property
    def pending(self) -> float | None:
        """Seconds from the call's start to its completion, or to its turn's end when it never completed."""
        end = self.completed if self.completed is not None else self.turn_ended
        return None if self.started is None or end is None else end - self.started

    @property
    def pending_after_turn(self) -> float | None:
        """Abandoned calls: seconds the capture goes on after the turn ended (the client still waiting)."""
        if self.completed is not None or self.turn_ended is None or self.waited_until is None:
            return None
        return max(0.0, self.waited_until - self.turn_ended)


def clock(stream: AccumulatedStream, times: Iterable[tuple[int, float | None]], after: float | None) -> Clock | None:
    """The clock of one turn's stream, from the time of each of its frames by the frame's number (None or
    NaN: a frame without one); None when no frame has a time."""
    needed: set[int] = set()
    for call in stream.calls:
        needed.update(p.number for p in (call.started, call.ended, call.abandon_pos) if p is not None)
    needed.update(e.pos.number for e in stream.executions)
    kept: dict[int, float] = {}
    last: float | None = None
    for number, t in times:
        if t is None or t != t:
            continue
        if last is None or t > last:
            last = t
        if number in needed:
            kept[number] = t
    return None if last is None else Clock(kept, last, after)


def call_timing(stream: AccumulatedStream, call: ToolCall) -> CallTiming | None:
    """When ``call`` started, completed and ran, and how long it stayed pending; None without times."""
    found = stream.capture.clock
    if found is None:
        return None
    started, completed = found.at(call.started), found.at(call.ended) if call.status == "complete" else None
    executions = [found.at(e.pos) for e in stream.executions if e.call == call.ordinal]
    executed = min((t for t in executions if t is not None), default=None)
    turn_ended = waited_until = None
    waited_for = None
    if call.status != "complete":
        turn_ended = found.at(call.abandon_pos)
        if turn_ended is None:
            turn_ended = started
        later = [found.at(e.pos) for e in stream.executions]
        latest = max((t for t in later if t is not None), default=None)
        if found.after is not None:
            waited_until, waited_for = found.after, "the next request"
        elif latest is not None:
            waited_until, waited_for = latest, "an execute record"
    return CallTiming(started, completed, turn_ended, executed, waited_until, waited_for)


def timing_lines(timing: CallTiming) -> tuple[str, ...]:
    """What text reporters print under a call."""
    pending = timing.pending
    if timing.completed is not None:
        text = f"timing   pending {pending:.3f} s (t {timing.started:.3f} → {timing.completed:.3f})"
        if timing.executed is not None:
            gap = timing.executed - timing.completed
            text += f", ran {abs(gap):.3f} s {'after' if gap >= 0 else 'before'} completing"
        return (text,)
    text = "timing   never completed"
    if pending is not None:
        text += f"; pending {pending:.3f} s until its turn ended (t {timing.turn_ended:.3f})"
    waited = timing.pending_after_turn
    if waited is not None:
        text += f", then {waited:.3f} s more until {timing.waited_for} (t {timing.waited_until:.3f})"
    return (text,)


def timing_data(timing: CallTiming) -> dict[str, float | str | None]:
    """What the JSON report carries under the call's ``extras["timing"]``."""

    def seconds(value: float | None) -> float | None:
        return None if value is None else round(value, 6)  # no float noise from the subtractions

    return {
        "started": timing.started,
        "completed": timing.completed,
        "pending": seconds(timing.pending),
        "turn_ended": timing.turn_ended,
        "executed": timing.executed,
        "pending_after_turn": seconds(timing.pending_after_turn),
        "waited_for": timing.waited_for,
    }
