"""A capture whose frames are read as they are used, so that a replay holds one piece of the file at a time.

The streaming readers (SSE, JSON Lines, the envelope, a JSON array; gzipped or not) can read a capture piece by
piece (``Reader.stream``). ``Streamed`` runs one over the file: frames come out in order, the
caps are checked as they come (frames counted, bytes by ``chunks``), and what the reader
noticed lands on ``capture`` (problems as read; ``size``, ``comments``, ``ended_cleanly`` at the
end). Nothing keeps the frames: the caller translates each and lets it go. What the engine still
needs about them afterwards is kept here, small: how many there were, the request record, and
their times (8 bytes a frame, only when the capture records times).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from itertools import chain
from typing import TYPE_CHECKING

from stream_doctor.capture import limits as _limits
from stream_doctor.capture.base import KEPT_BODIES, Capture, Exchange, Frame, InputProblem, keep_file_body
from stream_doctor.capture.chunks import Origin, pieces

if TYPE_CHECKING:
    from stream_doctor.capture.base import InteractionsReader, StreamingReader
    from stream_doctor.capture.runs import RunForm, RunReading


class ManyTurns(Exception):
    """An envelope holds a second request record: it has several turns, which are split from the whole
    frame list (``conversation.build.split``); the engine reads it again that way."""


class Streamed:
    """A capture read lazily by a reader that has ``stream``; iterate ``frames()`` once."""

    def __init__(self, origin: Origin, reader: StreamingReader, path: str, chunks: Iterator[bytes]) -> None:
        self.origin = origin
        self.reader = reader
        self.capture = Capture(path, reader.name, 0, [])  # ``frames`` stays empty
        self._chunks: Iterator[bytes] | None = chunks  # the first read's (the head was read from it)
        self.count = 0  # frames read so far
        self.one_turn = True  # raise ManyTurns at a second request record
        self.requests: list[Frame] = []  # the envelope's request record (one: see ManyTurns)
        self.first_t: float | None = None
        self.min_t = math.inf
        self.max_t = -math.inf
        self.timed = 0  # how many frames carry a time
        self._times: array[float] | None = None  # frame number - 1 -> t (NaN: none), once one has a time
        self._other_times: dict[int, float] = {}  # frame number -> t, for a time that is not a float (an int)
        self._runs: RunReading | None = None
        # ManyTurns raised at the first batch: that batch and the reader's batches after it, which
        # ``whole`` goes on from instead of reading and parsing the file's first piece again
        self._stopped: tuple[list[Frame], Iterator[list[Frame]]] | None = None

    def frames(self, runs: bool = False) -> Iterator[Frame]:
        """Every frame, in order (CaptureError when a cap is reached or the bytes cannot be read).

        ``runs``: the reader may give runs of an adapter's fragment events as ``FrameRun``s
        (``capture/runs.py``), once ``read_runs`` says which; until then it reads in small steps.
        """
        if runs and getattr(self.reader, "reads_runs", False):
            from stream_doctor.capture.runs import RunReading  # it imports orjson: `--container`'s help must not

            self._runs = RunReading()
        return chain.from_iterable(self._batches())

    def read_runs(self, form: RunForm | None) -> None:
        """Which runs to read from now on (None: none); only after ``frames(runs=True)``."""
        reading = self._runs
        if reading is not None:
            reading.form, reading.pending = form, False

    def whole(self) -> Capture:
        """The capture read whole by the reader's ``read`` (the bytes read again when frames were taken).

        An envelope of several turns (an agent session, whose bytes grow with the square of its turns)
        is read piece by piece instead, into the same frames: joined, its bytes would be held whole
        beside the lines its frames keep, twice the file before anything is parsed."""
        if self.reader.name == "envelope" and KEPT_BODIES.get() is None:
            return self._gathered()
        chunks, self._chunks = self._chunks, None
        if chunks is None:
            chunks = self.origin.chunks()
        token = _limits.CURRENT.set(self.origin.limits)
        try:
            data = b"".join(chunks)
            capture = self.reader.read(data, self.capture.path)
        finally:
            _limits.CURRENT.reset(token)
        capture.compressed = self.origin.compressed
        keep_file_body(capture, data)
        return capture

    def _gathered(self) -> Capture:
        """Every frame in one list, read as ``frames`` reads them: on from the first batch when ManyTurns
        stopped the reading there (nothing read was handed on), else the file read again from its start."""
        stopped, self._stopped = self._stopped, None
        frames: list[Frame] = []
        batches: Iterator[list[Frame]]
        if stopped is not None:
            reading, batches = self, chain([stopped[0]], self._counted(stopped[1]))
        else:
            chunks, self._chunks = self._chunks, None
            reading = Streamed(
                self.origin, self.reader, self.capture.path, chunks if chunks is not None else self.origin.chunks()
            )
            batches = reading._batches()
        reading.one_turn = False
        for batch in batches:
            frames += batch
        capture = reading.capture
        capture.frames = frames
        return capture

    def duration(self) -> float | None:
        """Seconds from the earliest to the latest time a frame carries (as ``stages.duration_of``)."""
        return self.max_t - self.min_t if self.timed > 1 else None

    def times(self) -> Iterator[tuple[int, float]]:
        """The time of each frame that carried one, by its number, as ``accumulate.pending.clock`` reads them."""
        if self._times is None:
            return
        other = self._other_times
        for number, t in enumerate(self._times, 1):
            if t == t:  # not NaN
                yield number, t
            elif number in other:
                yield number, other[number]

    def _batches(self) -> Iterator[list[Frame]]:
        chunks, self._chunks = self._chunks, None
        if chunks is None:
            chunks = self.origin.chunks()
        capture = self.capture
        reading = self._runs
        cut = pieces(self._sized(chunks), self.reader.cut)
        batches = self.reader.stream(cut, capture) if reading is None else self.reader.stream(cut, capture, reading)  # type: ignore[call-arg]
        yield from self._counted(batches, first=reading is None)

    def _counted(self, batches: Iterator[list[Frame]], first: bool = False) -> Iterator[list[Frame]]:
        """The reader's batches, counted against the frame cap and watched for times and requests;
        ``first``: ManyTurns at the first batch keeps it and ``batches`` for ``whole`` (``_stopped``)."""
        limits = self.origin.limits
        watch = self.capture.container != "sse"  # SSE frames never carry times or records
        reading = self._runs
        for batch in batches:
            self.count += len(batch)
            if reading is not None:  # a FrameRun is one entry for several frames
                self.count += reading.extra
                reading.extra = 0
            if self.count > limits.max_frames:
                raise _limits.too_many_frames(limits)
            if watch and self._watch(batch):
                if first:
                    self._stopped = (batch, batches)
                raise ManyTurns
            first = False
            yield batch
            del batch  # not held while the next one is read

    def _sized(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        capture = self.capture
        capture.compressed = self.origin.compressed
        for chunk in chunks:
            capture.size += len(chunk)
            yield chunk

    def _watch(self, batch: list[Frame]) -> bool:
        """Note the batch's times and requests; true (the whole batch noted) when, read as one turn, it
        holds a second request."""
        for frame in batch:
            if frame.kind == "request":
                self.requests.append(frame)
            t = frame.t
            if t is None:
                continue
            times = self._times
            if times is None:
                times = self._times = array("d")
            missing = frame.pos.number - 1 - len(times)
            if missing:
                times.extend(array("d", [math.nan]) * missing)
            if type(t) is float:
                times.append(t)
            else:  # kept as it was read: the JSON report prints it
                times.append(math.nan)
                self._other_times[frame.pos.number] = t
            if self.first_t is None:
                self.first_t = t
            self.timed += 1
            if t < self.min_t:
                self.min_t = t
            if t > self.max_t:
                self.max_t = t
        return self.one_turn and len(self.requests) > 1


class Interactions:
    """A capture of HTTP exchanges (HAR, cassettes) read one interaction at a time by a reader that has
    ``turns``: the engine replays each turn as it is read and lets its frames go, so a replay holds the
    file's bytes, the interaction being read and what each turn keeps (its stream and request), not
    every turn's frames. ``whole`` reads it as one frame list (``convert``, executions given after the fact).
    """

    def __init__(self, origin: Origin, reader: InteractionsReader, path: str, data: bytes) -> None:
        self.origin = origin
        self.reader = reader
        self.data = data
        self.capture = Capture(path, reader.name, len(data), [])  # ``frames`` stays empty
        self.capture.compressed = origin.compressed

    def whole(self) -> Capture:
        token = _limits.CURRENT.set(self.origin.limits)
        try:
            capture = self.reader.read(self.data, self.capture.path)
        finally:
            _limits.CURRENT.reset(token)
        capture.compressed = self.origin.compressed
        return capture

    def turns(self) -> Iterator[tuple[Exchange, list[Frame], list[InputProblem]]]:
        """Each interaction: its exchange, its frames and problems (CaptureError when the file cannot be read)."""
        inner = self.reader.turns(self.data, self.capture.path, self.capture)
        limits = self.origin.limits
        while True:
            token = _limits.CURRENT.set(limits)  # the bodies are decoded under the capture's caps
            try:
                item = next(inner, None)
            finally:
                _limits.CURRENT.reset(token)
            if item is None:
                return
            yield item
