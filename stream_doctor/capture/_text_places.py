"""Where a value stored inside a YAML or JSON file sits in that file: lines and byte offsets.

Cassettes and HAR files store each response body as one string of the outer file. For a YAML quoted
scalar (what vcrpy writes for a body with newlines), ``quoted_places`` re-reads the scalar the way
the YAML scanner does (escapes, folded line breaks) and notes, for every file line, the body byte
offset at which that line's share of the body begins, so a frame found at body offset N can be
placed on its own line of the file. ``json_places`` finds where chosen values of a JSON document
(a HAR file) begin, in one pass of a regular expression over its bytes.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Callable

from stream_doctor.capture.http_frames import Folded

# One token of a double-quoted scalar: a run of plain text, an escape, a run of blanks, a line break, the end.
_DOUBLE = re.compile(
    r'[^"\\ \t\r\n]+|\\(?:\r\n|[\r\n]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)|[ \t]+|\r\n|[\r\n]|"', re.S
)
_SINGLE = re.compile(r"[^' \t\r\n]+|''|[ \t]+|\r\n|[\r\n]|'")
_BLANK = re.compile(r"[ \t]*")
_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
    "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}  # fmt: skip


class Source:
    """A file's text with its line starts, in bytes and (for files that are not ASCII) in characters."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.text = data.decode("utf-8", "replace")
        self.starts = [0] + [m.end() for m in re.finditer(b"\n", data)]
        self._char_starts: list[int] | None = None if not self.text.isascii() else self.starts

    def line_of(self, offset: int) -> int:
        """The 1-based line holding byte ``offset``."""
        return bisect_right(self.starts, offset)

    def char_start(self, line: int) -> int | None:
        """The character index at which 0-based ``line`` starts."""
        if self._char_starts is None:
            self._char_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        return self._char_starts[line] if line < len(self._char_starts) else None

    def byte_offset(self, line: int, column: int) -> int:
        """The byte offset of a YAML mark (0-based line, column in characters)."""
        if line >= len(self.starts):
            return len(self.data)
        if self._char_starts is self.starts:
            return self.starts[line] + column
        start = self.char_start(line) or 0
        return self.starts[line] + len(self.text[start : start + column].encode("utf-8", "surrogatepass"))


def quoted_places(source: Source, line: int, column: int, value: str) -> Folded | None:
    """Where each file line's share of a quoted YAML scalar starts in its value (``value.encode()``).

    ``line`` (0-based) and ``column`` are the scalar's start as the YAML parser marks it (its opening
    quote). Returns None when the scalar is not quoted or re-reading it does not give ``value`` back.
    """
    line_text_start = source.char_start(line)
    if line_text_start is None:
        return None
    at = line_text_start + column
    if at >= len(source.text) or source.text[at] not in "\"'":
        return None
    scalar = _Quoted(source, line, column, at)
    if not scalar.read() or "".join(scalar.out) != value:
        return None
    return Folded(scalar.body_offsets, scalar.lines, scalar.offsets)


class _Quoted:
    """A quoted YAML scalar re-read from its opening quote at ``at``: its value (``out``) as YAML folds its
    lines, and where each file line's share of it starts (``body_offsets``, ``lines``, ``offsets``)."""

    __slots__ = (
        "source",
        "text",
        "double",
        "out",
        "size",
        "body_offsets",
        "lines",
        "offsets",
        "pending",
        "at",
        "current",
    )

    def __init__(self, source: Source, line: int, column: int, at: int) -> None:
        self.source = source
        self.text = source.text
        self.double = self.text[at] == '"'
        self.out: list[str] = []
        self.size = 0  # bytes of ``out`` once encoded
        self.body_offsets = [0]
        self.lines = [line + 1]
        self.offsets = [source.byte_offset(line, column + 1)]
        self.pending = ""  # blanks that are kept only when no line break follows them
        self.at = at + 1
        self.current = line

    def read(self) -> bool:
        """The scalar read to its closing quote; False when a piece or an escape cannot be read."""
        text, double = self.text, self.double
        token, close = (_DOUBLE, '"') if double else (_SINGLE, "'")
        while True:
            match = token.match(text, self.at)
            if match is None:
                return False
            piece = match.group()
            self.at = match.end()
            first = piece[0]
            if piece == close:
                if self.pending:
                    self.emit(self.pending)
                return True
            if first in " \t":
                self.pending += piece
                continue
            if first in "\r\n":  # a line break folds to a space, or to the blank lines after it
                self.pending = ""
                blank = self.breaks()
                self.emit("\n" * blank if blank else " ")
                self.mark()
                continue
            if self.pending:
                self.emit(self.pending)
                self.pending = ""
            if double and first == "\\":
                if not self.escape(piece[1:]):
                    return False
            elif not double and piece == "''":
                self.emit("'")
            else:
                self.emit(piece)

    def escape(self, escape: str) -> bool:
        """A double-quoted scalar's escape (what follows its backslash); False when it is none YAML has."""
        if escape[0] in "\r\n":  # an escaped line break: the blank lines after it only
            blank = self.breaks()
            if blank:
                self.emit("\n" * blank)
            self.mark()
        elif escape[0] in "xuU" and len(escape) > 1:
            self.emit(chr(int(escape[1:], 16)))
        elif escape in _ESCAPES:
            self.emit(_ESCAPES[escape])
        else:
            return False
        return True

    def emit(self, chunk: str) -> None:
        self.out.append(chunk)
        self.size += len(chunk) if chunk.isascii() else len(chunk.encode("utf-8", "surrogatepass"))

    def breaks(self) -> int:
        """After a line break: skip the next lines' indentation; count the blank lines."""
        text = self.text
        blank = 0
        self.current += 1
        while True:
            indent = _BLANK.match(text, self.at)
            assert indent is not None
            self.at = indent.end()
            if text.startswith("\r\n", self.at):
                self.at += 2
            elif self.at < len(text) and text[self.at] in "\r\n":
                self.at += 1
            else:
                break
            blank += 1
            self.current += 1
        return blank

    def mark(self) -> None:
        """The current file line's share of the value starts here."""
        start = self.source.char_start(self.current)
        if start is None:
            return
        self.body_offsets.append(self.size)
        self.lines.append(self.current + 1)
        self.offsets.append(self.source.byte_offset(self.current, self.at - start))


# Whole strings (never backtracking) and the structural bytes of JSON; numbers and literals are skipped.
_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[][{},:]', re.S)


def json_places(data: bytes, wanted: Callable[[tuple[str | int, ...]], bool]) -> dict[tuple[str | int, ...], int]:
    """The byte offset at which each wanted value of a JSON document begins (strings, objects and arrays).

    ``wanted`` is asked about the path of every string, object and array value (keys and indices);
    the scan is one pass of a regular expression, so a HAR file of many megabytes costs little.
    """
    found: dict[tuple[str | int, ...], int] = {}
    slots: list[str | int] = []  # the path of the container being read: one slot per open container
    objects: list[bool] = []  # whether each open container is an object
    awaiting_key: list[bool] = []
    for match in _JSON_TOKEN.finditer(data):
        start = match.start()
        byte = data[start]
        if byte == 0x22:  # a string
            if objects and objects[-1] and awaiting_key[-1]:
                slots[-1] = match.group()[1:-1].decode("utf-8", "replace")
                continue
            path = tuple(slots)
            if wanted(path):
                found[path] = start
        elif byte in (0x7B, 0x5B):  # { [
            path = tuple(slots)
            if path and wanted(path):
                found[path] = start
            objects.append(byte == 0x7B)
            awaiting_key.append(byte == 0x7B)
            slots.append("" if byte == 0x7B else 0)
        elif byte in (0x7D, 0x5D):  # } ]
            if objects:
                objects.pop()
                awaiting_key.pop()
                slots.pop()
        elif byte == 0x3A:  # :
            if awaiting_key:
                awaiting_key[-1] = False
        elif objects:  # ,
            if objects[-1]:
                awaiting_key[-1] = True
            else:
                index = slots[-1]
                slots[-1] = index + 1 if isinstance(index, int) else 0
    return found
