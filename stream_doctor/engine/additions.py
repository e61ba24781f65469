"""What a replay adds to its turns beyond their own events: executions given after the fact, and the capture's times.

Executions told after the fact (``--executed``, ``--executions``, the library's ``executions``; read
and resolved by ``engine/executions.py``) are placed at the end of the turns whose calls they name, which the
engine then replays again. A capture that records times gives each turn its clock (``accumulate.pending.clock``)
and each call its timing on the report (``timing.call_timing``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence, TypeVar

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
    from stream_doctor.capture.base import Frame
    from stream_doctor.conversation.build import Section
    from stream_doctor.engine.executions import Supplied
    from stream_doctor.values.options import Options
    from stream_doctor.values.report import Report

#: What the engine keeps beside each turn's stream (its ``Kept``), carried through unchanged.
K = TypeVar("K")


def given_after(options: Options) -> bool:
    """Whether executions are given after the fact: then the capture is replayed from its whole frame list."""
    return bool(options.executed or options.executions is not None or options.execution_records)


def supplied_of(options: Options) -> list[Supplied]:
    """The executions given after the fact, read and checked (SuppliedError when one cannot be used)."""
    if not given_after(options):
        return []
    from stream_doctor.engine.executions import given_records, parse_executed, read_executions

    supplied = parse_executed(options.executed)
    if options.executions is not None:
        supplied += read_executions(options.executions)
    return supplied + given_records(options.execution_records)


def add_executions(
    supplied: Sequence[Supplied], sections: list[Section], calls: Sequence[Sequence[ToolCall]]
) -> dict[int, int]:
    """Each execution's frame put at the end of the turn whose call it names (``calls``: each turn's
    calls); the 0-based turns changed, with how many frames each had read (SuppliedError when a
    CALL names no call or several). All are placed on the capture as it is, so findings keep its
    own lines and events."""
    from stream_doctor.engine.executions import frames_for, place

    read: dict[int, int] = {}
    for number, records in place(supplied, calls).items():
        section = sections[number]
        read[number] = len(section.frames)
        last = max((f.pos for f in section.frames), default=None, key=lambda pos: pos.number)
        section.frames = section.frames + frames_for(records, last)
    return read


def frame_times(frames: Iterable[Frame]) -> Iterator[tuple[int, float]]:
    """The frames' times by frame number, those that carry one, as ``accumulate.pending.clock`` reads them."""
    return ((frame.pos.number, frame.t) for frame in frames if frame.t is not None)


def timed(
    times: Sequence[Iterable[tuple[int, float]]],
    replayed: list[tuple[AccumulatedStream, K]],
    starts: Sequence[float | None],
) -> list[tuple[AccumulatedStream, K]]:
    """Each turn's stream with its clock: the times of its calls' events, and when the next turn began.

    ``times``: each turn's frame times by frame number, in frame order (``frame_times``; a streamed capture's
    ``Streamed.times``), read once; ``starts``: each turn's first time.
    """
    from stream_doctor.accumulate.pending import clock

    out = []
    for number, (turn, (stream, kept)) in enumerate(zip(times, replayed, strict=True)):
        after = next((t for t in starts[number + 1 :] if t is not None), None)
        found = clock(stream, turn, after)
        out.append((replace(stream, capture=replace(stream.capture, clock=found)) if found else stream, kept))
    return out


def with_timings(report: Report) -> Report:
    """The report with each call's timing attached (terminal lines, JSON ``extras["timing"]``)."""
    from stream_doctor.accumulate.pending import call_timing, timing_data, timing_lines
    from stream_doctor.values.report import CallExtra

    streams = [turn.stream for turn in report.turns] or [report.stream]
    number = 0
    attached = []
    for stream in streams:
        for call in stream.calls:
            number += 1
            timing = call_timing(stream, call)
            if timing is not None and timing.started is not None:
                attached.append((number, CallExtra("timing", timing_data(timing), timing_lines(timing))))
    return report.with_extras(attached)
