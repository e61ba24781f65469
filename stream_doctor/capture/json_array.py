"""A JSON array of events: ``[ {...}, {...} ]``, pretty-printed or not.

This is also what Gemini's ``streamGenerateContent`` sends without ``alt=sse``: one array whose
elements arrive one by one, so a cut stream is an array without its closing ``]``. Each element
becomes a frame that knows the line and byte offset where it starts.
"""

from __future__ import annotations

import re

import orjson

from stream_doctor.capture._text import BOM, json_error
from stream_doctor.capture.base import NOT_JSON, Capture, CaptureError, Frame, InputProblem, Pos
from stream_doctor.capture.limits import current, too_many_frames
from stream_doctor.gcpause import no_gc

# One match per structural byte, with whole strings skipped inside the regex engine. The quantifiers
# are possessive: a string that never closes (a cut capture, or 50 MB of `\"` escapes) fails in one
# pass without the engine keeping a backtracking state per escape (60 times the input's size before).
# A lone `"` only matches when its string never closes, i.e. the capture was cut inside it.
_TOKEN = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[][{},"]', re.DOTALL)

_WHITESPACE = b" \t\r\n"


def _sniff(head: bytes) -> tuple[int, str]:
    if head.removeprefix(BOM).lstrip(_WHITESPACE).startswith(b"["):
        return 90, ""
    return 0, "does not start with '['"


class _Lines:
    """Line numbers for offsets visited in increasing order, counting only the bytes in between."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.has_cr = b"\r" in data
        self.offset = 0
        self.line = 1

    def at(self, offset: int) -> int:
        data, start = self.data, self.offset
        lines = data.count(b"\n", start, offset)
        if self.has_cr:
            # Lone CRs end lines too (the same rule as the line-based readers). A CRLF cannot
            # straddle `start`: offsets handed in point at the first byte of a JSON value.
            lines += data.count(b"\r", start, offset) - data.count(b"\r\n", start, offset)
        self.offset = offset
        self.line += lines
        return self.line


def read_json_array(data: bytes, path: str) -> Capture:
    """One frame per element of the top-level array; a cut array keeps its whole elements."""
    lines = _Lines(data)
    begin = len(BOM) if data.startswith(BOM) else 0
    first = len(data) - len(data[begin:].lstrip(_WHITESPACE))
    if first == len(data):
        raise CaptureError("the capture holds no JSON value")
    if data[first] != 0x5B:  # "["
        shown = data[first : first + 20].decode("utf-8", "replace")
        raise CaptureError(f"not a JSON array: it starts with {shown!r}", line=lines.at(first))

    frames: list[Frame] = []
    problems: list[InputProblem] = []
    loads = orjson.loads
    max_frames = current().max_frames

    def element(start: int, end: int) -> bool:
        """Add data[start:end] as a frame; False when it holds nothing but whitespace."""
        chunk = data[start:end]
        content = chunk.strip(_WHITESPACE)
        if not content:
            return False
        if len(frames) >= max_frames:
            raise too_many_frames(current())
        offset = start + len(chunk) - len(chunk.lstrip(_WHITESPACE))
        where = Pos(len(frames) + 1, lines.at(offset), offset)
        try:
            frames.append(Frame(where, content, loads(content)))
        except orjson.JSONDecodeError as exc:
            frames.append(Frame(where, content, NOT_JSON, json_error(exc)))
        return True

    depth = 1
    element_start = first + 1  # just after the "[" or the last top-level ","
    closed_at = -1
    cut_in_string = False
    with no_gc():
        for token in _TOKEN.finditer(data, first + 1):
            at = token.start()
            byte = data[at]
            if byte == 0x22:  # '"'
                if token.end() - at == 1:
                    cut_in_string = True
                    break
            elif byte == 0x7B or byte == 0x5B:  # "{" "["
                depth += 1
            elif byte == 0x7D or byte == 0x5D:  # "}" "]"
                depth -= 1
                if depth == 0:
                    if not element(element_start, at) and frames:
                        # `[1, ]`: a trailing comma leaves an empty last element
                        where = Pos(len(frames) + 1, lines.at(at), at)
                        frames.append(Frame(where, b"", NOT_JSON, "not JSON: empty element"))
                    closed_at = at
                    break
            elif depth == 1:  # a top-level ","
                if not element(element_start, at):
                    where = Pos(len(frames) + 1, lines.at(at), at)
                    frames.append(Frame(where, b"", NOT_JSON, "not JSON: empty element"))
                element_start = at + 1

        ended_cleanly = closed_at >= 0
        if ended_cleanly:
            after = len(data) - len(data[closed_at + 1 :].lstrip(_WHITESPACE))
            if after < len(data):
                problems.append(
                    InputProblem(
                        "data-after-array",
                        "there is more data after the array's closing ']'; it was not read",
                        Pos(len(frames) + 1, lines.at(after), after),
                    )
                )
        else:
            _cut(data, element_start, depth, cut_in_string, frames, problems, lines)

    return Capture(path, "json", len(data), frames, problems=problems, ended_cleanly=ended_cleanly)


def _cut(
    data: bytes,
    element_start: int,
    depth: int,
    cut_in_string: bool,
    frames: list[Frame],
    problems: list[InputProblem],
    lines: _Lines,
) -> None:
    """The array never closed: keep a last element that is whole, and say where the cut is."""
    chunk = data[element_start:]
    content = chunk.strip(_WHITESPACE)
    offset = element_start + len(chunk) - len(chunk.lstrip(_WHITESPACE))
    partial = bool(content)
    if partial and depth == 1 and not cut_in_string:
        # `[{...}, {...}` with only the "]" missing: the last element is whole.
        try:
            value = orjson.loads(content)
        except orjson.JSONDecodeError:
            pass
        else:
            frames.append(Frame(Pos(len(frames) + 1, lines.at(offset), offset), content, value))
            partial = False
            offset = len(data)
    whole = len(frames)
    message = f"the JSON array is cut after {whole} whole element{'s' if whole != 1 else ''}"
    if partial:
        message += f"; the element starting here is incomplete ({len(content)} bytes) and was not read"
    else:
        message += " (its closing ']' is missing)"
    problems.append(InputProblem("truncated-array", message, Pos(whole + 1, lines.at(offset), offset)))


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


READER = JsonArrayReader()
