"""One JSON value per line: bare provider events ("jsonl") and stream-doctor's envelope.

Bare JSONL is what SDK test suites and logging proxies save (the Vercel AI SDK's ``*.chunks.txt``,
Ollama's ``application/x-ndjson``); the envelope wraps each event with its timing and records
what the application did (see ``envelope.py`` and docs/envelope.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

import orjson

from stream_doctor.capture import envelope
from stream_doctor.capture._text import BOM, json_error, split_lines
from stream_doctor.capture.base import NOT_JSON, Capture, CaptureError, Frame, InputProblem, Pos
from stream_doctor.capture.chunks import line_cut
from stream_doctor.capture.limits import check_bound, line_bound
from stream_doctor.gcpause import no_gc

# A first line longer than the sniffing head is cut; its start is all there is to go on.
_ENVELOPE_START = re.compile(rb'\s*\{\s*"sd"\s*:')
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
            if cut and line.lstrip().startswith(b"{"):
                if not envelope_only:
                    return 80, ""
                if _ENVELOPE_START.match(line):
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

    __slots__ = ("line", "offset", "frames", "undecodable", "last_frame", "ends_with_line_end")

    def __init__(self) -> None:
        self.line = 0  # lines before the piece
        self.offset = 0  # its byte offset
        self.frames = 0  # frames before it
        self.undecodable = -1  # the 0-based line that last failed to decode
        self.last_frame: Frame | None = None
        self.ends_with_line_end = True

    def pieces(self, pieces: Iterable[tuple[bytes, bool]]) -> Iterator[tuple[list[bytes], list[int]]]:
        """Each non-empty piece's lines and the byte offsets they start at, counting from the file's start
        (a BOM skipped); ``line`` and ``frames`` are advanced by the caller (``advance``)."""
        first = True
        for piece, _ in pieces:
            if first:
                first = False
                if piece.startswith(BOM):
                    piece, self.offset = piece[len(BOM) :], len(BOM)
            if not piece:
                continue
            lines, starts = split_lines(piece)
            base = self.offset
            if base:
                starts = [base + start for start in starts]
            self.ends_with_line_end = piece.endswith((b"\n", b"\r"))
            self.offset += len(piece)
            yield lines, starts
            del piece, lines, starts

    def advance(self, lines: int, frames: list[Frame]) -> bool:
        """Count a piece's lines and the frames read from it; true when it gave any frame."""
        self.line += lines
        if not frames:
            return False
        self.frames += len(frames)
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
    reader: Callable[[Iterable[tuple[bytes, bool]], Capture], Iterator[list[Frame]]], capture: Capture, data: bytes
) -> Capture:
    with no_gc():
        for batch in reader(((data, True),), capture):
            capture.frames += batch
    return capture


def read_jsonl(data: bytes, path: str) -> Capture:
    """One frame per non-blank line; a line that is not JSON is a frame with the reason."""
    return _whole(stream_jsonl, Capture(path, "jsonl", len(data), []), data)


def stream_jsonl(pieces: Iterable[tuple[bytes, bool]], capture: Capture) -> Iterator[list[Frame]]:
    """The frames of a JSON Lines capture read piece by piece (each piece but the last ends with a
    line end), a list per piece; ``capture.ended_cleanly`` is known once the last is read."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    new_tuple = tuple.__new__  # builds a Pos in C, skipping NamedTuple's Python-level __new__
    read = _Lines()
    for lines, starts in read.pieces(pieces):
        frames: list[Frame] = []
        append = frames.append
        before = read.frames
        base = read.line
        for index, line in enumerate(lines):
            if not line:
                continue
            where = new_tuple(Pos, (before + len(frames) + 1, base + index + 1, starts[index]))
            try:
                value = loads(line)
            except decode_error as exc:
                if line.isspace():
                    continue
                append(Frame(where, line, NOT_JSON, json_error(exc)))
                read.undecodable = base + index
                continue
            if b'"sd"' in line and type(value) is dict and "sd" in value:
                append(_appended(value, line, where))
            else:
                append(Frame(where, line, value))
        if read.advance(len(lines), frames):
            yield frames
        del lines, starts, frames  # not held while the next piece is read and cut into frames
    capture.ended_cleanly = not read.cut_last_line(capture.problems)


def read_envelope(data: bytes, path: str) -> Capture:
    """The header into ``Capture.header``, every other record into a frame (see ``envelope``)."""
    return _whole(stream_envelope, Capture(path, "envelope", len(data), []), data)


def stream_envelope(pieces: Iterable[tuple[bytes, bool]], capture: Capture) -> Iterator[list[Frame]]:
    """The frames of an envelope read piece by piece, as ``stream_jsonl``; the header goes to
    ``capture.header`` as soon as it is read."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    to_frame = envelope.to_frame
    problems_of = envelope.problems_of
    problems = capture.problems
    first = True
    read = _Lines()
    for lines, starts in read.pieces(pieces):
        frames: list[Frame] = []
        before = read.frames
        base = read.line
        for index, line in enumerate(lines):
            if not line or line.isspace():
                continue
            where = Pos(before + len(frames) + 1, base + index + 1, starts[index])
            try:
                record = loads(line)
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
            frames.append(to_frame(record, line, where))
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

    def stream(self, pieces: Iterable[tuple[bytes, bool]], capture: Capture) -> Iterator[list[Frame]]:
        """The frames a piece at a time (see ``stream_jsonl``); the engine's streaming replay reads them."""
        return stream_jsonl(pieces, capture)

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

    def stream(self, pieces: Iterable[tuple[bytes, bool]], capture: Capture) -> Iterator[list[Frame]]:
        """The frames a piece at a time (see ``stream_envelope``)."""
        return stream_envelope(pieces, capture)

    cut = staticmethod(line_cut)


JSONL_READER = JsonlReader()
ENVELOPE_READER = EnvelopeReader()
