"""An SSE event still open where a piece ends, carried to the next piece (issue 31: small inputs stay small).

``chunks.sse_cut`` cuts a capture after comment lines, inside an event too, so that ``event: ping``
followed by a gigabyte of keep-alive comments is read a chunk at a time. The lines of the open event
are carried from piece to piece without its comment runs, which are counted, with where each was
(``gaps``); when the event ends, ``sse._Read.lines`` reads the lines kept with those gaps put back
into every line number and byte offset (``placed``), so the event, its problems and their positions
are exactly those of the event read whole. What is kept is the event's own lines: its fields, and
of each run of comments only a line that is not UTF-8, the first (which the event's ``not-utf8``
problem names when it is the event's first such line).
"""

from __future__ import annotations

import re

from stream_doctor.capture._text import is_utf8
from stream_doctor.capture.chunks import blank_cut

#: A run of whole comment lines, from a line start (the text always starts at one).
_COMMENT_RUN = re.compile(rb"(?:(?<=[\r\n])|\A)(?::[^\r\n]*(?>\r\n|\r|\n))+")
#: A line end at the text's start (a blank line: the text starts at a line start), or two in a row.
_BLANK_LINE = re.compile(rb"\A(?>\r\n|\r|\n)|(?>\r\n|\r|\n)(?>\r\n|\r|\n)")
_LINE = re.compile(rb"[^\r\n]*(?>\r\n|\r|\n)")

#: A gap: where in the kept text comment lines were taken out, how many lines and bytes.
Gap = tuple[int, int, int]


class OpenEvent:
    """The kept lines of an event not yet ended, from its block's first line (``line``, ``offset``)."""

    __slots__ = ("text", "gaps", "line", "offset", "comments")

    def __init__(self, line: int, offset: int) -> None:
        self.text = bytearray()
        self.gaps: list[Gap] = []
        self.line = line
        self.offset = offset
        self.comments = 0  # the comment lines taken out

    def add(self, piece: bytes) -> None:
        """The next bytes of the event (starting at a line start, ending with a line end unless the
        capture ends there), their comment runs taken out."""
        done = 0
        for run in _COMMENT_RUN.finditer(piece):
            start, end = run.span()
            self._keep(piece[done:start])
            done = end
            bad = None if is_utf8(piece[start:end]) else _first_bad_line(piece, start, end)
            if bad is None:
                self.skip(_lines(piece, start, end), end - start)
                continue
            self.skip(_lines(piece, start, bad[0]), bad[0] - start)
            self._keep(piece[bad[0] : bad[1]])  # the event's not-utf8 problem may name it
            self.skip(_lines(piece, bad[1], end), end - bad[1])
        self._keep(piece[done:])

    def skip(self, lines: int, size: int) -> None:
        """``lines`` comment lines (``size`` bytes) taken out here."""
        if not size:
            return
        self.comments += lines
        text = self.text
        if text[-1:] == b"\r":
            text[-1] = 0x0A  # a lone CR, so that an LF after the gap is not read as its second half
        self.gaps.append((len(text), lines, size))

    def _keep(self, part: bytes) -> None:
        self.text += part


def _lines(data: bytes, start: int, end: int) -> int:
    """The lines of whole comment lines ``data[start:end]``: its line ends, a CRLF counted once."""
    return data.count(b"\n", start, end) + data.count(b"\r", start, end) - data.count(b"\r\n", start, end)


def _first_bad_line(data: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The span of the first line of ``data[start:end]`` that is not UTF-8 (a rare run: line by line)."""
    for line in _LINE.finditer(data, start, end):
        if not is_utf8(line.group()):
            return line.span()
    return None


def split(piece: bytes) -> tuple[bytes, bytes]:
    """A piece (not the capture's last) cut after its last blank line: its whole events, and what follows
    them (an event still open, or comment lines alone)."""
    at = blank_cut(piece, 0, final=True)
    return (piece, b"") if at == len(piece) else (piece[:at], piece[at:])


def blank_end(piece: bytes) -> int:
    """Where the first blank line of ``piece`` (which starts at a line start) ends, -1 when it has none."""
    found = _BLANK_LINE.search(piece)
    return -1 if found is None else found.end()


def placed(starts: list[int], gaps: list[Gap], base_line: int, size: int) -> list[int]:
    """Each line's number (and the number after the last line), counting the lines of the gaps before it;
    ``starts`` (each line's start in the kept text) become offsets in the capture's bytes, in place."""
    numbers = []
    lines = 0
    size_before = 0
    gap = 0
    for i, start in enumerate([*starts, size]):
        while gap < len(gaps) and gaps[gap][0] <= start:
            lines += gaps[gap][1]
            size_before += gaps[gap][2]
            gap += 1
        numbers.append(base_line + i + lines)
        if i < len(starts):
            starts[i] = start + size_before
    return numbers
