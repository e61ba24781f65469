"""A JSON array of events: ``[ {...}, {...} ]``, pretty-printed or not.

This is also what Gemini's ``streamGenerateContent`` sends without ``alt=sse``: one array whose
elements arrive one by one, so a cut stream is an array without its closing ``]``. Each element
becomes a frame that knows the line and byte offset where it starts. The array is read a piece at a
time (``stream``, as SSE and JSON Lines are), each element decoded alone as it closes, so memory
follows the largest element, not the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import orjson

from stream_doctor.capture._text import BOM, json_error
from stream_doctor.capture.base import NOT_JSON, Capture, CaptureError, Frame, InputProblem, Piece, Pos
from stream_doctor.capture.chunks import piece_bytes
from stream_doctor.capture.limits import current, too_many_frames
from stream_doctor.capture.starts.json import OPENS
from stream_doctor.util.gcpause import no_gc

# Between two structural bytes that matter, skipped inside the regex engine: runs of other bytes and
# whole strings. At the top level a "," matters (it ends an element); deeper, only brackets do.
# Every quantifier is possessive: a string that never closes (a cut capture, or 50 MB of `\"`
# escapes) fails in one pass without the engine keeping a backtracking state per escape (60 times
# the input's size with a backtracking tokenizer). A match stops before a byte that matters, before a
# `"` whose string does not close in the piece, or at the piece's end.
_STRING = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_SKIP_TOP = re.compile(rb'(?:[^][{},"]++|' + _STRING + rb")*+", re.DOTALL)
_SKIP_NESTED = re.compile(rb'(?:[^][{}"]++|' + _STRING + rb")*+", re.DOTALL)
# The rest of a string that an earlier piece opened: it stops at its closing `"`, at the piece's end, or
# before a `\` that is the piece's last byte (its escaped byte is in the next piece).
_STRING_REST = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)
_CONTENT = re.compile(rb"[^ \t\r\n]")

_WHITESPACE = b" \t\r\n"


def _sniff(head: bytes) -> tuple[int, str]:
    if head.removeprefix(BOM).lstrip(_WHITESPACE).startswith(OPENS):
        return 90, ""
    return 0, "does not start with '['"


class _Splitter:
    """The top-level elements of a JSON array fed a piece at a time, each decoded alone as it closes.

    The state between pieces is small: the depth, whether a string is open (and a pending ``\\``),
    and the bytes of the one element not closed yet. So memory follows the largest element, and
    the work is linear: each byte is scanned once (by the regex engine), each element decoded once.
    Lines and byte offsets are exactly those of reading the file whole.
    """

    #: Whether a lone CR ends a line (the line-based readers' rule); a HAR file's lines end in LF only.
    lone_cr_ends_lines = True

    def __init__(self, capture: Capture, base: int = 0, line: int = 1) -> None:
        self.capture = capture
        self.base = base  # the file offset of the piece being read
        self.started = False  # the "[" was read
        self.depth = 1
        self.in_string = False
        self.escape = False  # a string's "\\" ended the last piece
        self.closed = False
        self.after_found = False
        self.element_start = 0  # file offset just after the "[" or the last top-level ","
        self.held: list[bytes] = []  # the element's bytes read in earlier pieces
        self.content = -1  # file offset of the element's first byte that is not whitespace, once seen
        self.content_line = 0
        self.last_content = -1  # file offset just after its last byte that is not whitespace (held pieces)
        self.count = 0  # frames made
        self.line = line  # the line of file offset ``line_at``
        self.line_at = base
        self.closed_at = -1  # the file offset of the closing "]"
        self.cr_end = False  # the last piece ended in "\r" (counted as a line end; an "\n" next undoes that)
        self.has_cr = False  # the piece being read holds a "\r"
        self.max_frames = current().max_frames

    def line_of(self, data: bytes, offset: int) -> int:
        """The line of file offset ``offset`` (in ``data``, the piece being read; offsets asked increase)."""
        start, end = self.line_at - self.base, offset - self.base
        lines = data.count(b"\n", start, end)
        if self.has_cr and self.lone_cr_ends_lines:  # lone CRs end lines too, as in the line-based readers
            lines += data.count(b"\r", start, end) - data.count(b"\r\n", start, end)
        self.line += lines
        self.line_at = offset
        return self.line

    def feed(self, data: bytes) -> list[Frame]:
        """The elements that close in ``data``, the next piece of the file."""
        frames: list[Frame] = []
        size = len(data)
        base = self.base
        self.has_cr = b"\r" in data
        if self.cr_end and data[0] == 0x0A and self.lone_cr_ends_lines:
            self.line -= 1  # a CRLF across two pieces is one line end
        at = 0
        if not self.started:
            at = self._start(data)
        elif self.closed:
            self._after(data, 0)
            at = size
        skip_top, skip_nested, string_rest = _SKIP_TOP.match, _SKIP_NESTED.match, _STRING_REST.match
        while at < size:
            if self.in_string:
                if self.escape:
                    at += 1  # the escaped byte
                    self.escape = False
                    if at >= size:
                        break
                at = string_rest(data, at).end()  # type: ignore[union-attr]
                if at >= size:
                    break
                if data[at] == 0x5C:  # "\\", the piece's last byte
                    self.escape = True
                    at = size
                    break
                self.in_string = False
                at += 1
                continue
            at = (skip_top if self.depth == 1 else skip_nested)(data, at).end()  # type: ignore[union-attr]
            if at >= size:
                break
            byte = data[at]
            if byte == 0x22:  # '"': a string that does not close in this piece
                self.in_string = True
                at += 1
            elif byte == 0x7B or byte == 0x5B:  # "{" "["
                self.depth += 1
                at += 1
            elif byte == 0x7D or byte == 0x5D:  # "}" "]"
                self.depth -= 1
                if self.depth == 0:
                    if not self._element(data, at, frames) and self.count:
                        # `[1, ]`: a trailing comma leaves an empty last element
                        frames.append(self._empty(data, base + at))
                    self.closed = True
                    self.closed_at = base + at
                    self._after(data, at + 1)
                    at = size
                    break
                at += 1
            else:  # a top-level ","
                if not self._element(data, at, frames):
                    frames.append(self._empty(data, base + at))
                self.element_start = base + at + 1
                self.content = -1
                at += 1
        if self.started and not self.closed:
            self._hold(data)
        self.line_of(data, base + size)
        self.cr_end = data[-1] == 0x0D
        self.base = base + size
        return frames

    def _start(self, data: bytes) -> int:
        """Past the BOM and whitespace to the "[" (CaptureError when the array starts with something else)."""
        begin = len(BOM) if self.base == 0 and data.startswith(BOM) else 0
        found = _CONTENT.search(data, begin)
        if found is None:
            return len(data)
        first = found.start()
        if data[first] != 0x5B:  # "["
            shown = data[first : first + 20].decode("utf-8", "replace")
            raise CaptureError(
                f"not a JSON array: it starts with {shown!r}", line=self.line_of(data, self.base + first)
            )
        self.started = True
        self.element_start = self.base + first + 1
        return first + 1

    def _hold(self, data: bytes) -> None:
        """Keep the bytes of the element this piece ends inside (and where its content starts and ends)."""
        start = self.element_start - self.base
        if start >= len(data):
            return
        held = data[start:] if start > 0 else data
        if self.content < 0:
            found = _CONTENT.search(held)
            if found is None:
                self.element_start = self.base + len(data)  # whitespace so far: nothing to keep
                return
            self.content = self.element_start + found.start() if start >= 0 else self.base + found.start()
            self.content_line = self.line_of(data, self.content)
        stripped = len(held.rstrip(_WHITESPACE))
        if stripped:
            self.last_content = self.base + max(start, 0) + stripped
        self.held.append(held)

    def _take(self, data: bytes, end: int) -> bytes:
        """The element's bytes from ``element_start`` up to ``end`` in ``data``, and forget the held ones."""
        start = self.element_start - self.base
        if not self.held:
            return data[start:end]
        chunk = b"".join((*self.held, data[:end]))
        self.held = []
        return chunk

    def _element(self, data: bytes, end: int, frames: list[Frame]) -> bool:
        """The element that ends at ``end`` in ``data`` as a frame; False when it holds only whitespace."""
        chunk = self._take(data, end)
        content = chunk.strip(_WHITESPACE)
        if not content:
            return False
        if self.count >= self.max_frames:
            raise too_many_frames(current())
        if self.content < 0:
            offset = self.element_start + len(chunk) - len(chunk.lstrip(_WHITESPACE))
            line = self.line_of(data, offset)
        else:
            offset, line = self.content, self.content_line
        self.count += 1
        where = Pos(self.count, line, offset)
        try:
            frames.append(Frame(where, content, orjson.loads(content)))
        except orjson.JSONDecodeError as exc:
            frames.append(Frame(where, content, NOT_JSON, json_error(exc)))
        return True

    def _empty(self, data: bytes, offset: int) -> Frame:
        self.count += 1
        return Frame(Pos(self.count, self.line_of(data, offset), offset), b"", NOT_JSON, "not JSON: empty element")

    def _after(self, data: bytes, start: int) -> None:
        """Report the first byte after the closing "]" that is not whitespace (it is not read)."""
        if self.after_found:
            return
        found = _CONTENT.search(data, start)
        if found is None:
            return
        self.after_found = True
        after = self.base + found.start()
        self.capture.problems.append(
            InputProblem(
                "data-after-array",
                "there is more data after the array's closing ']'; it was not read",
                Pos(self.count + 1, self.line_of(data, after), after),
            )
        )

    def finish(self) -> list[Frame]:
        """The end of the capture: an array never closed keeps a last element that is whole, and says
        where the cut is (``truncated-array``)."""
        capture = self.capture
        if not self.started:
            raise CaptureError("the capture holds no JSON value")
        capture.ended_cleanly = self.closed
        if self.closed:
            return []
        frames: list[Frame] = []
        end = self.base  # the end of the file
        partial = self.content >= 0
        offset, line = (self.content, self.content_line) if partial else (end, self.line)
        length = self.last_content - self.content
        if partial and self.depth == 1 and not self.in_string:
            # `[{...}, {...}` with only the "]" missing: the last element may be whole.
            content = b"".join(self.held).strip(_WHITESPACE)
            self.held = []
            try:
                value = orjson.loads(content)
            except orjson.JSONDecodeError:
                pass
            else:
                self.count += 1
                frames.append(Frame(Pos(self.count, line, offset), content, value))
                partial = False
                offset, line = end, self.line
        self.held = []
        whole = self.count
        message = f"the JSON array is cut after {whole} whole element{'s' if whole != 1 else ''}"
        if partial:
            message += f"; the element starting here is incomplete ({length} bytes) and was not read"
        else:
            message += " (its closing ']' is missing)"
        capture.problems.append(InputProblem("truncated-array", message, Pos(whole + 1, line, offset)))
        return frames


def stream_json_array(pieces: Iterable[Piece], capture: Capture) -> Iterator[list[Frame]]:
    """The frames of a JSON array read piece by piece (pieces may end anywhere), a list per piece;
    ``capture.ended_cleanly`` and a cut array's problem are known once the last is read."""
    splitter = _Splitter(capture)
    first = b""  # the first bytes, until they can tell a BOM
    for data, start, end, last in pieces:
        piece = piece_bytes(data, start, end)
        del data
        if len(first) < len(BOM) and not splitter.base:
            piece = first = first + piece
            if len(first) < len(BOM) and not last:
                continue
        if piece:
            yield splitter.feed(piece)
        if last:
            yield splitter.finish()


def read_json_array(data: bytes, path: str) -> Capture:
    """One frame per element of the top-level array; a cut array keeps its whole elements."""
    capture = Capture(path, "json", len(data), [])
    with no_gc():
        for frames in stream_json_array(((data, 0, len(data), True),), capture):
            capture.frames += frames
    return capture


def _whole_piece(data: bytes, start: int, fresh: bool = False) -> int:
    """A JSON array's pieces may end anywhere: the splitter keeps its state across them."""
    return len(data)


class JsonArrayReader:
    """Reader for a capture that is one JSON array of events."""

    name = "json"
    title = "JSON array of events"

    def sniff(self, head: bytes) -> int:
        return _sniff(head)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        return read_json_array(data, path)

    def stream(self, pieces: Iterable[Piece], capture: Capture) -> Iterator[list[Frame]]:
        """The frames a piece at a time (see ``stream_json_array``); the engine's streaming replay reads them."""
        return stream_json_array(pieces, capture)

    cut = staticmethod(_whole_piece)


READER = JsonArrayReader()
