"""Helpers every line-oriented capture reader shares: line splitting with exact offsets, UTF-8, errors."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate, count
from operator import add

import orjson

from stream_doctor.util import jsontext

BOM = b"\xef\xbb\xbf"

# The spec allows CRLF, CR and LF, mixed in one stream; the capturing group keeps the line
# ends in re.split's output so offsets stay exact.
_LINE_END = re.compile(rb"(\r\n|\r|\n)")


def uniform_line_end(data: bytes, start: int = 0, end: int | None = None) -> bytes | None:
    """The one line end ``data[start:end]`` uses (LF or CRLF), or None when CRs are mixed in."""
    if data.find(b"\r", start, end) < 0:  # the usual capture: one memchr, not a count of every byte
        return b"\n"
    return b"\r\n" if crlf_only(data, start, end) else None


def crlf_only(data: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether every CR and LF of ``data[start:end]`` is one of a CRLF pair within it (counted in C)."""
    crs = data.count(b"\r", start, end)
    return crs == data.count(b"\n", start, end) and crs == data.count(b"\r\n", start, end)


def split_lines(data: bytes, start: int = 0, end: int | None = None) -> tuple[list[bytes], list[int]]:
    """Cut ``data[start:end]`` into lines (ends removed) and the offset in ``data`` at which each line starts.

    Lines end in LF, CR or CRLF. A final line end does not start another (empty) line. The lines are
    cut from ``data`` itself: a piece of a larger buffer is not copied first.
    """
    if end is None:
        end = len(data)
    line_end = uniform_line_end(data, start, end)
    if line_end is not None:
        return _cut_lines(data, start, end, line_end)  # the usual capture, all LF or all CRLF
    parts = _LINE_END.split(data[start:end] if start or end != len(data) else data)
    lines = parts[0::2]
    starts = list(accumulate(map(len, parts), initial=start))[0::2]
    if not lines[-1]:
        lines.pop()
    del starts[len(lines) :]
    return lines, starts


#: Lines this long on average (bytes) are cut by a ``find`` each (memchr, which skips ahead many bytes at a
#: time); shorter ones by ``bytes.split``, which steps through every byte but pays no call per line.
#: A request line of an agent session carries its whole history (tens of KB): split's byte loop was an
#: eighth of such a replay's instructions. The average is checked every ``_SAMPLE`` lines; lines found
#: short are split ``_BLOCK`` bytes at a time, and the lines after a block sampled again, so the short
#: first turns of a session do not have its long later requests split byte by byte too.
_LONG = 512
_SAMPLE = 16
_BLOCK = 256 * 1024


def _cut_lines(data: bytes, start: int, size: int, line_end: bytes) -> tuple[list[bytes], list[int]]:
    """``split_lines`` of ``data[start:size]`` with one line end: its ``split(line_end)`` and each line's start."""
    find = data.find
    step = len(line_end)
    lines: list[bytes] = []
    starts: list[int] = []
    mark = start
    sampled = 0  # lines cut by ``find`` since ``mark``
    while start < size:
        end = find(line_end, start, size)
        if end < 0:
            end = size
        lines.append(data[start:end])
        starts.append(start)
        start = end + step
        sampled += 1
        if sampled < _SAMPLE:
            continue
        if start - mark < _SAMPLE * _LONG and start < size:  # short lines: the next block in C
            stop = find(line_end, min(start + _BLOCK, size), size)
            block = data[start : size if stop < 0 else stop].split(line_end)
            if stop < 0 and not block[-1]:  # a final line end does not start another line
                block.pop()
            starts += map(add, accumulate(map(len, block), initial=start), count(0, step))
            del starts[len(lines) + len(block) :]
            lines += block
            start = size if stop < 0 else stop + step
        mark, sampled = start, 0
    return lines, starts


def json_error(exc: orjson.JSONDecodeError) -> str:
    """``not JSON: <orjson's reason> at column N`` (with the line when the payload has several)."""
    reason = exc.msg
    if reason.startswith("str is not valid UTF-8"):
        return "not JSON: not valid UTF-8"
    if reason.startswith("Input is a zero-length"):
        return "not JSON: empty"
    where = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
    if reason in jsontext.GAVE_UP:  # orjson gave up on the nesting: cut, or deeper than it reads
        left = jsontext.open_containers(exc.doc)
        if left is None or left > 0:
            return f"not JSON: it ends {'inside a string' if left is None else f'with {left:,} containers open'}"
        if reason == jsontext.GAVE_UP[0]:  # "not JSON" as the clients' json.loads says too (RecursionError)
            return f"not JSON to the reader: {reason}: it {jsontext.TOO_DEEP} (at {where})"
    return f"not JSON: {reason} at {where}"


def is_utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def is_utf8_cut(data: bytes) -> bool:
    """Valid UTF-8 but perhaps for a character cut off at its end (a capture that stops mid-line)."""
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data"
    return True


def head_lines(head: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """The lines of a sniffing head, lazily: ``(number, line, cut)``, ``cut`` for a line the head ends in.

    Sniffers only look at the first lines, so they should not pay for splitting the whole head.
    A lone CR does not end a line here; for telling formats apart that does not matter.
    """
    start = 0
    number = 0
    size = len(head)
    while start < size:
        number += 1
        end = head.find(b"\n", start)
        if end < 0:
            yield number, head[start:].rstrip(b"\r"), True
            return
        yield number, head[start:end].rstrip(b"\r"), False
        start = end + 1
