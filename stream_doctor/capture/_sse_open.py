"""An SSE event still open where a piece ends, carried to the next piece (issue 31: small inputs stay small).

``chunks.sse_cut`` cuts a capture after comment lines, inside an event too, so that ``event: ping``
followed by a gigabyte of keep-alive comments is read a chunk at a time. The lines of the open event
are carried from piece to piece without its comment runs, which are counted, with where each was
(``gaps``); when the event ends, ``_sse_lines.LineReader.lines`` reads the lines kept with those gaps put back
into every line number and byte offset (``placed``), so the event, its problems and their positions
are exactly those of the event read whole. What is kept is the event's own lines: its fields, and
of each run of comments only a line that is not UTF-8, the first (which the event's ``not-utf8``
problem names when it is the event's first such line).

``chunks.sse_cut`` cuts after lines of unknown fields too (``event: ping`` and 32 MiB of ``f: x`` lines).
Each whole unknown-field line is told as it is added (``tell``: in line order, with its place) and taken
out as a gap, but for the event's first line (where the event starts) and its first one that is not
UTF-8 (which ``not-utf8`` may name), kept and told already (``told``: the line reader does not tell them
again). An event whose first line starts with ``{`` may be a JSON body without ``data:`` prefixes
(``_sse_lines.LineReader.unprefixed`` reads it whole, as google-genai joins such lines): its lines are held, untold,
only while each can be part of JSON text and they stay under ``JSON_BODY_MAX`` (``JsonBody``, which the
line reader applies to a block read whole too); the first line that cannot, or a comment line, ends the
candidate: the lines held are told then, in order, at their places, and the event goes on as any other
(issue 31: ``{`` and 32 MiB of ``f: x`` lines took 2.75 GB).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from stream_doctor.capture._text import is_utf8
from stream_doctor.capture.chunks import SSE_FIELDS, blank_cut

#: A run of whole comment lines, from a line start (the text always starts at one).
_COMMENT_RUN = re.compile(rb"(?:(?<=[\r\n])|\A)(?::[^\r\n]*(?>\r\n|\r|\n))+")
#: A line end at the text's start (a blank line: the text starts at a line start), or two in a row.
_BLANK_LINE = re.compile(rb"\A(?>\r\n|\r|\n)|(?>\r\n|\r|\n)(?>\r\n|\r|\n)")
_LINE = re.compile(rb"[^\r\n]*(?>\r\n|\r|\n)")
_FIRST_LINE = re.compile(rb"[^\r\n]*")

#: A line that can be part of JSON text: JSON's tokens and blanks alone (no string spans a line).
_JSON_LINE = re.compile(
    rb'(?>[ \t]*+(?>"(?>[^"\\\r\n]++|\\.)*+"|-?[0-9][0-9.eE+\-]*+|true|false|null|[{}\[\],:]))*+[ \t]*+'
)
#: How much a JSON body without ``data:`` prefixes may hold, its lines and a byte for each line end: the
#: error objects Google's APIs write this way are a few hundred bytes. Past it, its lines are unknown fields.
JSON_BODY_MAX = 256 << 10


class JsonBody:
    """The lines held of a block whose first line starts with ``{``, while it may be one JSON object
    written without ``data:`` prefixes."""

    __slots__ = ("size",)

    def __init__(self) -> None:
        self.size = 0

    def takes(self, line: bytes) -> bool:
        """Whether ``line`` (without its line end) may go on the body: JSON's tokens alone, not a comment,
        the body still under ``JSON_BODY_MAX``. False ends the candidate: its lines are unknown fields."""
        self.size += len(line) + 1
        return self.size <= JSON_BODY_MAX and line[:1] != b":" and _JSON_LINE.fullmatch(line) is not None


#: Told of unknown field lines: their name, the first's line number and offset, and how many lines (copies of it).
Tell = Callable[[bytes, int, int, int], None]

#: A gap: where in the kept text comment lines were taken out, how many lines and bytes.
Gap = tuple[int, int, int]


class OpenEvent:
    """The kept lines of an event not yet ended, from its block's first line (``line``, ``offset``)."""

    __slots__ = (
        "text", "gaps", "line", "offset", "comments", "tell", "told", "first", "body", "held_from",
        "lines_in", "bytes_in", "bad_kept",
    )  # fmt: skip

    def __init__(self, line: int, offset: int, tell: Tell) -> None:
        self.text = bytearray()
        self.gaps: list[Gap] = []
        self.line = line
        self.offset = offset
        self.comments = 0  # the comment lines taken out
        self.tell = tell
        self.told: bool | None = None  # unknown fields told as added; None: no field line seen yet
        self.first = True  # the event's first field line is still to be told (or held)
        self.body: JsonBody | None = None  # while told is False: the JSON body the held lines may be
        self.held_from = (0, 0, 0)  # where the held lines start: in the text, in lines and bytes added
        self.lines_in = 0  # the lines added so far (kept or taken out), and their bytes
        self.bytes_in = 0
        self.bad_kept = False  # an unknown-field line that is not UTF-8 was kept

    def add(self, piece: bytes) -> None:
        """The next bytes of the event (starting at a line start, ending with a line end unless the
        capture ends there), their comment runs taken out."""
        done = 0
        for run in _COMMENT_RUN.finditer(piece):
            start, end = run.span()
            self._fields(piece[done:start])
            done = end
            bad = None if is_utf8(piece[start:end]) else _first_bad_line(piece, start, end)
            if bad is None:
                self.skip(_lines(piece, start, end), end - start)
                continue
            self.skip(_lines(piece, start, bad[0]), bad[0] - start)
            self._keep(piece[bad[0] : bad[1]])  # the event's not-utf8 problem may name it
            self.skip(_lines(piece, bad[1], end), end - bad[1])
        self._fields(piece[done:])

    def _fields(self, part: bytes) -> None:
        """Lines that are not comments: kept, but for unknown fields told and taken out (see the module)."""
        if not part:
            return
        if self.told is None:
            self.told = _FIRST_LINE.match(part).group().lstrip()[:1] != b"{"  # type: ignore[union-attr]
            if not self.told:
                self.body = JsonBody()
                self.held_from = (len(self.text), self.lines_in, self.bytes_in)
        if not self.told:
            part = self._held(part)
        self._told(part)

    def _held(self, part: bytes) -> bytes:
        """Kept, untold, the lines of ``part`` the JSON body takes; what follows the first it does not take
        (the candidate then ended: its lines told, see ``_end_body``)."""
        body = self.body
        assert body is not None
        for found in _LINE.finditer(part):
            line = found.group().rstrip(b"\r\n")
            if line and not body.takes(line):  # a blank line ends the event, no line of its body
                self._keep(part[: found.start()])
                self._end_body()
                return part[found.start() :]
        self._keep(part)  # a cut last line too: the line reader does not read it as a field
        return b""

    def _end_body(self) -> None:
        """The held lines are no JSON body: told and taken out now, in order, as if told as added."""
        start, self.lines_in, self.bytes_in = self.held_from
        held = bytes(self.text[start:])
        del self.text[start:]
        self.told, self.body = True, None
        self._told(held)

    def _told(self, part: bytes) -> None:
        """Lines read with their unknown fields told as added: known fields kept, unknown ones taken out."""
        first = self.first
        done = 0  # a cut last line (no line end) is kept: the line reader does not read it as a field
        match = _LINE.match
        while (found := match(part, done)) is not None:
            line = found.group()
            done = found.end()
            name = line.rstrip(b"\r\n").partition(b":")[0]
            if not name or name in SSE_FIELDS:
                self._keep(line)
            else:
                self.tell(name, self.line + self.lines_in, self.offset + self.bytes_in, 1)
                if first or not (self.bad_kept or is_utf8(line)):
                    self.bad_kept = self.bad_kept or not first
                    self._keep(line)
                else:
                    self.skip(1, len(line), comments=False)
                    if line[-1] == 10:  # an LF ends it: the same line after it is the next line, whole
                        done += self._copies(part, done, line, name)
            first = False
        self.first = first
        self._keep(part[done:])

    def _copies(self, part: bytes, at: int, line: bytes, name: bytes) -> int:
        """The copies of an unknown-field line just taken out that follow it at ``at`` (a flood of one line, as
        ``f: x`` sent a million times): told and taken out at once, found at memcmp speed; their bytes."""
        count = 0
        end = at
        block, copies = line, 1
        while part.startswith(block, end):  # one copy, two, four …
            end += len(block)
            count += copies
            block, copies = block + block, copies * 2
        while copies > 1:  # … then what is left, in halves
            block, copies = block[: len(block) // 2], copies // 2
            if part.startswith(block, end):
                end += len(block)
                count += copies
        if count:
            self.tell(name, self.line + self.lines_in, self.offset + self.bytes_in, count)
            self.skip(count, end - at, comments=False)
        return end - at

    def skip(self, lines: int, size: int, comments: bool = True) -> None:
        """``lines`` comment lines (or unknown-field lines: not ``comments``) of ``size`` bytes taken out here."""
        if comments and self.told is False:
            self._end_body()  # a comment line is no JSON text: the body it would be inside is none
        if not size:
            return
        self.lines_in += lines
        self.bytes_in += size
        if comments:
            self.comments += lines
        text = self.text
        if text[-1:] == b"\r":
            text[-1] = 0x0A  # a lone CR, so that an LF after the gap is not read as its second half
        gaps = self.gaps
        if gaps and gaps[-1][0] == len(text):  # the gap goes on (a run of unknown fields: one gap, not a line's)
            gaps[-1] = (len(text), gaps[-1][1] + lines, gaps[-1][2] + size)
        else:
            gaps.append((len(text), lines, size))

    def _keep(self, part: bytes) -> None:
        self.text += part
        self.lines_in += _lines(part, 0, len(part))
        self.bytes_in += len(part)


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
