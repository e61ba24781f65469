"""The turn the live diagnosis (``record.live``) is reading: what it keeps of it (``LiveTurn``), the conversation
rules' view of a conversation still going (``Window``), and the turn's clock from the time kept per frame
(``clocked``)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field, replace
from math import nan
from typing import Any

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.pending import clock
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import Frame, InputProblem, Pos
from stream_doctor.capture.envelope import problems_of
from stream_doctor.conversation.model import Conversation, Turn
from stream_doctor.engine.stages import Kept


@dataclass(eq=False)
class LiveTurn:
    """The turn being read: its translator, accumulator and what the features that watch it keep."""

    number: int
    translator: Any
    accumulator: Accumulator
    kept: Kept
    request: Frame | None = None
    problems: list[InputProblem] = field(default_factory=list)
    frames: int = 0
    first: Pos | None = None  # its first frame
    times: array[float] = field(default_factory=lambda: array("d"))  # t of each frame, NaN when it has none
    size: int = 0
    batch: list[Frame] = field(default_factory=list)  # event frames not yet translated (``flush``)

    def count(self, record: Any, line: bytes, pos: Pos, frame: Frame) -> None:
        """A record of the turn counted: the input problems it lists, its place and its time."""
        if type(record) is dict and "problems" in record:  # (the envelope reader's question)
            self.problems += problems_of(record, pos)
        self.frames += 1
        self.size = pos.offset + len(line) + 1  # (the line end)
        if self.first is None:
            self.first = pos
        self.times.append(frame.t if frame.t is not None else nan)


@dataclass(frozen=True)
class Window(Conversation):
    """The conversation rules' view of a conversation still going: ``turns`` holds only the turn to
    judge (none when only a request is), ``problems`` only the new pairing problems, and ``turn(n)`` (what
    locations are found through) reaches every turn so far."""

    every: list[Turn] = field(default_factory=list)

    def turn(self, number: int) -> Turn:
        return self.every[number - 1]


def clocked(stream: AccumulatedStream, turn: LiveTurn) -> AccumulatedStream:
    """The stream with its clock, as replay gives it (``accumulate.pending.clock``, from the time kept per frame)."""
    if turn.first is None:
        return stream
    base = turn.first.number
    found = clock(stream, zip(range(base, base + len(turn.times)), turn.times, strict=True), None)
    return replace(stream, capture=replace(stream.capture, clock=found)) if found is not None else stream
