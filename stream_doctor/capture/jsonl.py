"""One JSON value per line: bare provider events ("jsonl") and stream-doctor's envelope.

Bare JSONL is what SDK test suites and logging proxies save (the Vercel AI SDK's ``*.chunks.txt``,
Ollama's ``application/x-ndjson``); the envelope wraps each event with its timing and records
what the application did (see ``envelope.py`` and docs/envelope.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import partial

import orjson

from stream_doctor.capture import envelope
from stream_doctor.capture import runs as _runs
from stream_doctor.capture._text import BOM, json_error, split_lines, uniform_line_end
from stream_doctor.capture.base import NOT_JSON, Capture, CaptureError, Frame, InputProblem, Piece, Pos
from stream_doctor.capture.chunks import line_cut
from stream_doctor.capture.limits import check_bound, line_bound
from stream_doctor.capture.repeats import Repeats
from stream_doctor.capture.starts.envelope import RECORD
from stream_doctor.capture.starts.jsonl import OPENS
from stream_doctor.util.gcpause import no_gc

# A first line longer than the sniffing head is cut; its start is all there is to go on.
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _first_line(head: bytes) -> tuple[int, bytes, bool] | None:
    """The first non-blank line of ``head``: its number, its bytes, and whether the head cut it.

    Found without splitting the whole head into lines: that would cost more than reading a
    small capture.
    """
    head = head.removeprefix(BOM)
    start = len(head) - len(head.lstrip(b" \t\r\n"))
    if start == len(head):
        return None
    number = len(_LINE_END.findall(head, 0, start)) + 1
    end = _LINE_END.search(head, start)
    if end is None:
        return number, head[start:], True
    return number, head[start : end.start()], False


def _sniff(head: bytes, *, envelope_only: bool) -> tuple[int, str]:
    if head.removeprefix(BOM).lstrip().startswith(b"["):
        return 0, "starts with '[' (a JSON array, not one value per line)"
    first = _first_line(head)
    if first is None:
        return 0, "no non-blank line"
    number, line, cut = first
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:  # a JSON object but for bytes that are not UTF-8: still JSONL, and the line gets SD004
            value = orjson.loads(line.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            value = None
        if type(value) is not dict:
            if cut and line.lstrip().startswith(OPENS):
                if not envelope_only:
                    return 80, ""
                if RECORD.match(line):
                    return 100, ""
                return 0, f'line {number} is not an envelope record (no leading "sd" key)'
            return 0, f"line {number} is not a JSON object"
    if type(value) is not dict:
        return 0, f"line {number} is not a JSON object"
    if not envelope_only:
        return 80, ""
    if "sd" in value:
        return 100, ""
    return 0, f'line {number} is not an envelope record (no "sd" key)'


class _Lines:
    """Where a line-by-line read is: the lines and frames before the piece being read, the last line's fate."""

    __slots__ = ("line", "offset", "frames", "undecodable", "last_frame", "ends_with_line_end", "end")

    def __init__(self) -> None:
        self.line = 0  # lines before the piece
        self.offset = 0  # the byte offset in the file where the piece being read ends
        self.end = 0  # and where it ends in the bytes it was handed in: byte i of those is at offset - end + i
        self.frames = 0  # frames before it
        self.undecodable = -1  # the 0-based line that last failed to decode
        self.last_frame: Frame | None = None
        self.ends_with_line_end = True

    def raw(self, pieces: Iterable[Piece]) -> Iterator[tuple[bytes, int, int]]:
        """Each non-empty piece as ``(data, start, end)`` (a BOM skipped), ``offset`` already past it."""
        first = True
        for data, start, end, _ in pieces:
            if first:
                first = False
                if data.startswith(BOM, start, end):
                    start, self.offset = start + len(BOM), len(BOM)
            if start == end:
                continue
            self.ends_with_line_end = data[end - 1] in _LINE_ENDS
            self.offset += end - start
            self.end = end
            yield data, start, end
            del data

    def pieces(self, pieces: Iterable[Piece]) -> Iterator[tuple[list[bytes], list[int]]]:
        """Each non-empty piece's lines and the byte offsets they start at, counting from the file's start
        (a BOM skipped); ``line`` and ``frames`` are advanced by the caller (``advance``)."""
        for data, start, end in self.raw(pieces):
            yield self.lines(data, start, end)

    def lines(self, data: bytes, start: int, end: int) -> tuple[list[bytes], list[int]]:
        """The lines of ``data[start:end]`` (within the piece just read, ``start`` and ``end`` where lines
        start or the piece ends) and the byte offsets in the file they start at."""
        lines, starts = split_lines(data, start, end)
        base = self.offset - self.end
        return lines, list(map(base.__add__, starts)) if base else starts

    def advance(self, lines: int, frames: list[Frame], count: int | None = None) -> bool:
        """Count a piece's lines and the frames read from it (``count``: the frames read so far, when
        ``frames`` holds FrameRuns); true when it gave any frame."""
        self.line += lines
        if not frames:
            return False
        self.frames = self.frames + len(frames) if count is None else count
        self.last_frame = frames[-1]
        return True

    def cut_last_line(self, problems: list[InputProblem]) -> bool:
        """True (and a problem noted) when the capture stops inside its last line: the stream was cut.

        That is: the last line has no line end and is not JSON.
        """
        if self.undecodable < 0 or self.undecodable != self.line - 1 or self.ends_with_line_end:
            return False
        last = self.last_frame
        assert last is not None
        problems.append(
            InputProblem(
                "unterminated-event",
                f"the capture ends inside line {last.pos.line}: the stream was cut",
                last.pos,
            )
        )
        return True


def _appended(record: dict, line: bytes, where: Pos) -> Frame:  # type: ignore[type-arg]
    """An envelope record in a bare JSONL capture: an ``execute`` record the application appended
    (to an SDK's chunk log, say) is used as in an envelope; any other is reported at its line."""
    if record["sd"] == "execute":
        return envelope.to_frame(record, line, where)
    kind = record["sd"] if type(record["sd"]) is str else "?"
    return Frame(
        where,
        line,
        NOT_JSON,
        f"envelope: a {kind} record in a bare JSONL capture; only execute records may be appended "
        "(write an envelope for the rest, docs/envelope.md)",
    )


def _whole(
    reader: Callable[[Iterable[Piece], Capture], Iterator[list[Frame]]], capture: Capture, data: bytes
) -> Capture:
    with no_gc():
        for batch in reader(((data, 0, len(data), True),), capture):
            capture.frames += batch
    return capture


def read_jsonl(data: bytes, path: str) -> Capture:
    """One frame per non-blank line; a line that is not JSON is a frame with the reason."""
    return _whole(stream_jsonl, Capture(path, "jsonl", len(data), []), data)


def stream_jsonl(
    pieces: Iterable[Piece], capture: Capture, runs: _runs.RunReading | None = None
) -> Iterator[list[Frame]]:
    """The frames of a JSON Lines capture read piece by piece (each piece but the last ends with a
    line end), a list per piece; ``capture.ended_cleanly`` is known once the last is read.

    With ``runs`` (``capture/runs.py``) the runs of its form come as FrameRuns (``_with_runs``); while
    the form is still to be said, pieces are read in steps of ``runs.HEAD_STEP`` bytes, so that the frames
    the provider is detected from are about all that is read without runs.
    """
    read = _Lines()
    if runs is not None:
        pieces = _runs.small_first(pieces, runs, line_cut)
    for piece, start, end in read.raw(pieces):
        frames: list[Frame] = []
        if runs is not None and runs.form is not None and _runs.ENABLED:
            count = _with_runs(read, piece, start, end, frames, runs)
        else:
            count = _region(read, piece, start, end, frames, read.frames)
        if read.advance(0, frames, count):
            yield frames
        del piece, frames  # not held while the next piece is read and cut into frames
    capture.ended_cleanly = not read.cut_last_line(capture.problems)


_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() and bytes.isspace() take for whitespace
_LINE_ENDS = frozenset(b"\r\n")


def _region(read: _Lines, piece: bytes, start: int, end: int, frames: list[Frame], number: int) -> int:
    """A Frame for each line of ``piece[start:end]`` (whole lines), ``number`` frames having been read
    before them; counts its lines in ``read.line`` and returns the frames read after them."""
    if start == end:
        return number
    if piece[start] in _SPACE and piece[end - 1] in _SPACE and not piece[start:end].strip():
        # blank and whitespace lines alone (a piece of them): counted in C, as _frames skips them
        ends = piece.count(b"\n", start, end) + piece.count(b"\r", start, end) - piece.count(b"\r\n", start, end)
        read.line += ends + (piece[end - 1] not in _LINE_ENDS)
        return number
    lines, starts = read.lines(piece, start, end)
    number = _frames(lines, starts, read, frames, number)
    read.line += len(lines)
    return number


def _frames(lines: list[bytes], starts: list[int], read: _Lines, frames: list[Frame], number: int) -> int:
    """A Frame for each of these lines (``read.line`` lines before them), ``number`` frames having been
    read before them; returns the frames read after them."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    new_tuple = tuple.__new__  # builds a Pos in C, skipping NamedTuple's Python-level __new__
    append = frames.append
    base = read.line
    for index, line in enumerate(lines):
        if not line:
            continue
        where = new_tuple(Pos, (number + 1, base + index + 1, starts[index]))
        try:
            value = loads(line)
        except decode_error as exc:
            if line.isspace():
                continue
            append(Frame(where, line, NOT_JSON, json_error(exc)))
            read.undecodable = base + index
            number += 1
            continue
        if b'"sd"' in line and type(value) is dict and "sd" in value:
            append(_appended(value, line, where))
        else:
            append(Frame(where, line, value))
        number += 1
    return number


def _with_runs(read: _Lines, piece: bytes, start: int, end: int, frames: list[Frame], runs: _runs.RunReading) -> int:
    """The frames of the piece ``piece[start:end]``, each run of its form's events right after its head as one FrameRun (see
    ``capture/runs.py``; a head that is not one decoded frame, or fragments that do not decode, are
    read frame by frame); returns the frames read after the piece. Lines are split only between runs."""
    number = read.frames
    line_end = uniform_line_end(piece, start, end)
    form = runs.form
    if line_end is None or form is None:
        return _region(read, piece, start, end, frames, number)
    base = read.offset - read.end  # where ``piece``'s first byte is in the file
    done = start  # where what is not yet read starts
    for head_start, head_end, head_match, found in _runs.find_runs(runs, piece, start, end, line_end, True):
        number = _region(read, piece, done, head_end, frames, number)
        done = head_end
        head = frames[-1] if frames else None
        if head is None or head.pos.offset != base + head_start or head.value is NOT_JSON:
            continue  # the head is not one decoded frame: its run is read frame by frame
        rebuild = partial(_rebuilt, piece, head_end, found.end, base, read.line, number)
        run = _runs.frame_run(form, head, head_match, found, (base, number + 1, read.line + 1), 1, rebuild)
        if run is None:
            continue  # a fragment does not decode: the run is read frame by frame, which says why
        count = len(found.literals)
        done = found.end
        frames.append(run)  # type: ignore[arg-type]
        runs.extra += count - 1
        read.line += count
        number += count
    return _region(read, piece, done, end, frames, number)


def _rebuilt(piece: bytes, start: int, end: int, base: int, line: int, number: int) -> list[Frame]:
    """The frames of ``piece[start:end]`` (a run's lines) as reading them without runs gives."""
    read = _Lines()
    read.offset, read.line = base, line  # ``base``: where ``piece``'s first byte is in the file (``end`` 0)
    frames: list[Frame] = []
    _region(read, piece, start, end, frames, number)
    return frames


def read_envelope(data: bytes, path: str) -> Capture:
    """The header into ``Capture.header``, every other record into a frame (see ``envelope``)."""
    return _whole(stream_envelope, Capture(path, "envelope", len(data), []), data)


def stream_envelope(pieces: Iterable[Piece], capture: Capture) -> Iterator[list[Frame]]:
    """The frames of an envelope read piece by piece, as ``stream_jsonl``; the header goes to
    ``capture.header`` as soon as it is read."""
    from stream_doctor.capture.http_frames import LastUrl

    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    new_tuple = tuple.__new__  # builds a Pos in C, as ``_region`` does
    to_frame = envelope.to_frame
    problems_of = envelope.problems_of
    problems = capture.problems
    repeats = Repeats(json_text=True)  # a session's requests repeat their history: parsed, it is kept once
    redact_url = LastUrl()  # and go to one URL: redacted once
    first = True
    read = _Lines()
    for lines, starts in read.pieces(pieces):
        frames: list[Frame] = []
        before = read.frames
        base = read.line
        for index, line in enumerate(lines):
            if not line or line.isspace():
                continue
            where = new_tuple(Pos, (before + len(frames) + 1, base + index + 1, starts[index]))
            # a request that repeats the previous one is read for what is new
            repeated = repeats.record_of(line) if len(line) > repeats.shortest else None
            try:
                record = loads(line) if repeated is None else repeated
            except decode_error as exc:
                frames.append(Frame(where, line, NOT_JSON, json_error(exc)))
                read.undecodable = base + index
                first = False
                continue
            if first and type(record) is dict and record.get("sd") == "header":
                first = False
                if envelope.check_record(record) is None:
                    if record["version"] != envelope.VERSION:
                        raise CaptureError(
                            f"envelope version {record['version']!r} is not supported "
                            f"(this stream-doctor reads version {envelope.VERSION})",
                            line=base + index + 1,
                        )
                    capture.header = record
                    problems += problems_of(record, where)
                    continue
            first = False
            frame = to_frame(record, line, where, redact_url)
            if frame.kind == "request" and repeated is None:
                repeats.share(record["body"], line)
            frames.append(frame)
            if type(record) is dict and "problems" in record:
                problems += problems_of(record, where)
        if read.advance(len(lines), frames):
            yield frames
        del lines, starts, frames  # not held while the next piece is read and cut into frames
    carried_cut = any(p.kind in envelope.CUT_KINDS for p in problems)
    capture.ended_cleanly = not read.cut_last_line(problems) and not carried_cut


class JsonlReader:
    """Reader for bare JSONL: one provider event per line."""

    name = "jsonl"
    title = "JSON Lines, one provider event per line"

    def sniff(self, head: bytes) -> int:
        return _sniff(head, envelope_only=False)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head, envelope_only=False)[1]

    def read(self, data: bytes, path: str) -> Capture:
        check_bound(line_bound(data))
        return read_jsonl(data, path)

    reads_runs = True  # ``stream`` takes ``runs`` (capture/runs.py)

    def stream(
        self, pieces: Iterable[Piece], capture: Capture, runs: _runs.RunReading | None = None
    ) -> Iterator[list[Frame]]:
        """The frames a piece at a time (see ``stream_jsonl``); the engine's streaming replay reads them."""
        return stream_jsonl(pieces, capture, runs)

    cut = staticmethod(line_cut)


class EnvelopeReader:
    """Reader for stream-doctor's capture envelope (JSONL whose records carry an "sd" key)."""

    name = "envelope"
    title = "stream-doctor capture envelope (JSONL)"

    def sniff(self, head: bytes) -> int:
        return _sniff(head, envelope_only=True)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head, envelope_only=True)[1]

    def read(self, data: bytes, path: str) -> Capture:
        check_bound(line_bound(data))
        return read_envelope(data, path)

    def stream(self, pieces: Iterable[Piece], capture: Capture) -> Iterator[list[Frame]]:
        """The frames a piece at a time (see ``stream_envelope``)."""
        return stream_envelope(pieces, capture)

    cut = staticmethod(line_cut)


JSONL_READER = JsonlReader()
ENVELOPE_READER = EnvelopeReader()
