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

from stream_doctor.capture.exchange import Folded

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
    text = source.text
    line_text_start = source.char_start(line)
    if line_text_start is None:
        return None
    at = line_text_start + column
    if at >= len(text) or text[at] not in "\"'":
        return None
    double = text[at] == '"'
    token = _DOUBLE if double else _SINGLE
    out: list[str] = []
    size = 0  # bytes of ``out`` once encoded
    body_offsets = [0]
    lines = [line + 1]
    offsets = [source.byte_offset(line, column + 1)]
    pending = ""  # blanks that are kept only when no line break follows them
    at += 1
    current = line

    def emit(chunk: str) -> None:
        nonlocal size
        out.append(chunk)
        size += len(chunk) if chunk.isascii() else len(chunk.encode("utf-8", "surrogatepass"))

    def breaks() -> int:
        """After a line break: skip the next lines' indentation; count the blank lines."""
        nonlocal at, current
        blank = 0
        current += 1
        while True:
            indent = _BLANK.match(text, at)
            assert indent is not None
            at = indent.end()
            if text.startswith("\r\n", at):
                at += 2
            elif at < len(text) and text[at] in "\r\n":
                at += 1
            else:
                break
            blank += 1
            current += 1
        return blank

    def mark() -> None:
        start = source.char_start(current)
        if start is None:
            return
        body_offsets.append(size)
        lines.append(current + 1)
        offsets.append(source.byte_offset(current, at - start))

    while True:
        match = token.match(text, at)
        if match is None:
            return None
        piece = match.group()
        at = match.end()
        first = piece[0]
        if (double and piece == '"') or (not double and piece == "'"):
            if pending:
                emit(pending)
            break
        if first in " \t":
            pending += piece
            continue
        if first in "\r\n":
            pending = ""
            blank = breaks()
            emit("\n" * blank if blank else " ")
            mark()
            continue
        if pending:
            emit(pending)
            pending = ""
        if double and first == "\\":
            escape = piece[1:]
            if escape[0] in "\r\n":
                blank = breaks()
                if blank:
                    emit("\n" * blank)
                mark()
            elif escape[0] in "xuU" and len(escape) > 1:
                emit(chr(int(escape[1:], 16)))
            elif escape in _ESCAPES:
                emit(_ESCAPES[escape])
            else:
                return None
        elif not double and piece == "''":
            emit("'")
        else:
            emit(piece)
    if "".join(out) != value:
        return None
    return Folded(body_offsets, lines, offsets)


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
