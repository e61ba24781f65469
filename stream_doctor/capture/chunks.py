"""A capture's bytes a piece at a time: read from the file (or memory), gunzipped, cut where frames end.

The line-based readers (SSE, JSON Lines, the envelope) read a capture as a run of pieces that
each end where a frame may end, so frames can be made, replayed and dropped as the file is read:
memory then follows the largest frame, not the file. ``Origin`` can read the bytes again from the
start (the engine does when a capture turns out to need its whole frame list). The caps of
``limits`` apply while reading, as in ``limits.read_file`` and ``limits.gunzip``.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Callable, Iterator

from stream_doctor.capture import limits as _limits
from stream_doctor.capture.base import CaptureError, Piece

#: How much is read (and decompressed) at a time.
CHUNK = 1 << 20

_GZIP_MAGIC = b"\x1f\x8b"

#: The names of the SSE fields (any other field is unknown, and ignored by the spec).
SSE_FIELDS = (b"data", b"event", b"id", b"retry")


class Origin:
    """Where a capture's bytes come from: a regular file (opened again for each read) or bytes in memory.

    Standard input cannot be read twice, so it is read whole (under the byte cap) when opened.
    The checks ``limits.read_file`` makes (a regular file, not over the cap) are made here, once.
    """

    def __init__(self, path: str, data: bytes | None, limits: _limits.Limits) -> None:
        self.path = path
        self.limits = limits
        self.opened: Iterator[bytes] | None = None
        if data is None and path == "-":
            data = _limits.read_file(path, limits, sys.stdin.buffer)
        elif data is None:
            # opened (and checked: a regular file, not over the cap) now, read by the first ``raw``
            self.opened = _limits.file_chunks(path, limits, CHUNK)
            self.opened = _prepend(next(self.opened, b""), self.opened)
        elif len(data) > limits.max_bytes:
            raise _limits.too_big(limits)
        self.data = data
        self.compressed: str | None = None

    def raw(self) -> Iterator[bytes]:
        """The bytes as stored, a chunk at a time."""
        if self.data is not None:
            yield from slices(self.data)
            return
        opened, self.opened = self.opened, None
        yield from opened if opened is not None else _limits.file_chunks(self.path, self.limits, CHUNK)

    def chunks(self) -> Iterator[bytes]:
        """The capture's bytes (gzip undone), a chunk at a time, never empty chunks; sets ``compressed``."""
        raw = self.raw()
        first = b""
        for chunk in raw:  # enough to see the gzip magic
            first += chunk
            if len(first) >= len(_GZIP_MAGIC):
                break
        if first.startswith(_GZIP_MAGIC):
            self.compressed = "gzip"
            return gunzip_chunks(_prepend(first, raw), self.limits)
        self.compressed = None
        return _prepend(first, raw) if first else iter(())

    def whole(self, chunks: Iterator[bytes]) -> bytes:
        """All of the capture's bytes, for a reader that needs them at once; ``chunks`` is what ``chunks()``
        returned, maybe partly read. A file that is not compressed is read again in one piece: joining its
        chunks would hold it twice (the list of chunks and the joined copy)."""
        if self.data is None and self.compressed is None:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()  # the file those chunks were read from
            return _limits.read_file(self.path, self.limits)
        return b"".join(chunks)


def slices(data: bytes) -> Iterator[bytes]:
    """``data`` a ``CHUNK`` at a time, as a file of it is read."""
    for start in range(0, len(data), CHUNK):
        yield data[start : start + CHUNK]


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def head(chunks: Iterator[bytes], size: int) -> tuple[bytes, Iterator[bytes]]:
    """The first ``size`` bytes of ``chunks`` and an iterator over all of them again."""
    taken: list[bytes] = []
    total = 0
    for chunk in chunks:
        taken.append(chunk)
        total += len(chunk)
        if total >= size:
            break
    joined = b"".join(taken)
    return joined[:size], _prepend(joined, chunks)


def gunzip_chunks(raw: Iterator[bytes], limits: _limits.Limits) -> Iterator[bytes]:
    """Decompress gzip data (every member) a chunk at a time, never holding more than a chunk of output
    and never producing more than ``max_bytes`` (with the errors of ``limits.gunzip``)."""
    total = 0
    decompressor: zlib._Decompress | None = None  # the member being read
    pending = b""
    for data in raw:
        pending = pending + data if pending else data
        while True:
            if decompressor is None:
                pending = pending.lstrip(b"\0")  # gzip allows zero padding between members
                if len(pending) < 2:
                    break  # the next chunk says whether another member follows
                if not pending.startswith(_GZIP_MAGIC):
                    return  # trailing garbage after the last member: gzip itself ignores it
                decompressor = zlib.decompressobj(wbits=31)
            try:
                out = decompressor.decompress(pending, min(CHUNK, limits.max_bytes + 1 - total))
            except zlib.error as exc:
                raise CaptureError(f"corrupt gzip data: {exc}") from None
            total += len(out)
            if total > limits.max_bytes:
                raise _limits.too_big(limits, compressed=True)
            if out:
                yield out
            if decompressor.eof:
                pending, decompressor = decompressor.unused_data, None
                continue
            pending = decompressor.unconsumed_tail
            if not pending:
                break
    if decompressor is None:
        return
    while not decompressor.eof:  # drain what zlib still buffers, under the same cap
        try:
            out = decompressor.flush(min(CHUNK, limits.max_bytes + 1 - total))
        except zlib.error as exc:
            raise CaptureError(f"corrupt gzip data: {exc}") from None
        total += len(out)
        if total > limits.max_bytes:
            raise _limits.too_big(limits, compressed=True)
        if not out:
            break
        yield out
    if not decompressor.eof:
        raise CaptureError("the gzip data is cut off before its end (incomplete .gz file)")


def sse_cut(data: bytes, start: int, fresh: bool = False) -> int:
    """Where the last blank line of ``data`` at or after ``start`` ends (0: none), when nothing after
    it can change how its line ends read (a CR followed by LF is one line end); or, past it, where
    the last whole line ends when that line is a comment or an unknown field's (``fresh``: ``data``
    itself starts at a line start, so such a line from its start counts too).

    The SSE parser's state is empty after a blank line, and a comment line leaves it as it was: a piece
    may end after either, between events or inside one (``capture/_sse_open.py`` carries the open event
    on, its comment lines counted, not kept), and so may it after an unknown field's line, which the
    spec ignores (told as it is carried, then taken out). So keep-alive comments sent without blank
    lines, or unknown fields (or a gzip of a gigabyte of them, between events or after an ``event:``
    line) are read a chunk at a time instead of gathered whole as one piece."""
    best = blank_cut(data, start)
    after = _comment_end(data, max(best, start), fresh or best > 0)
    return max(best, after)


def _comment_end(data: bytes, at: int, known: bool) -> int:
    """The end of ``data``'s last line end from ``at`` on, whose reading nothing after it can change, when
    the line it ends is a comment line; else 0. ``known``: a line starts at ``at``. A few searches at
    memchr speed, nothing a line."""
    lf = data.rfind(b"\n", at) + 1
    cr = data.rfind(b"\r", max(at, lf))  # a CR after the last LF ends a line alone (CR line ends)
    end = lf
    if cr >= 0:
        if cr + 1 < len(data):
            end = cr + 1  # no LF follows it: there is none after the last one
        else:  # the CR ends the data: an LF may follow it in the next chunk, so it ends nothing yet
            before = data.rfind(b"\r", max(at, lf), cr)
            end = before + 1 if before >= 0 else lf
    if end <= at:
        return 0
    stop = end - 2 if data[end - 1] == 0x0A and end - 2 >= at and data[end - 2] == 0x0D else end - 1
    begin = max(data.rfind(b"\n", at, stop), data.rfind(b"\r", at, stop)) + 1
    if begin == 0 and not known:
        return 0  # the line may have begun before ``at``: what it is, is unknown
    begin = max(begin, at)
    colon = data.find(b":", begin, stop)
    name_end = stop if colon < 0 else colon
    if colon == begin:
        return end  # a comment line
    # an unknown field's line (only a name's first bytes are looked at: a line may be megabytes of junk)
    return end if name_end > begin and data[begin : min(name_end, begin + 6)] not in SSE_FIELDS else 0


def blank_cut(data: bytes, start: int, final: bool = False) -> int:
    """Where the last blank line of ``data`` at or after ``start`` ends (0: none); ``final``: ``data`` is
    all there is (a piece already cut), so a CR at its end ends its line and a line end at ``start`` is
    a blank line too (``data`` starts at a line start)."""
    best = _blank_cut(data, start, final)
    if not best and final and data[start : start + 1] in (b"\n", b"\r"):
        best = start + (2 if data.startswith(b"\r\n", start) else 1)
    return best


def _blank_cut(data: bytes, start: int, final: bool) -> int:
    if data.find(b"\r", start) < 0:  # LF only, the usual capture: one search (memchr), not five scans
        at = data.rfind(b"\n\n", start)
        return at + 2 if at >= 0 else 0
    # Only the last occurrence of each pattern counts, and one that ends before the best cut so far
    # cannot win: each search starts where it still could (CRLF captures: a few bytes, not the MiB).
    best = 0
    for pattern in (b"\n\r\n", b"\n\n", b"\r\r\n"):
        at = data.rfind(pattern, max(start, best - len(pattern) + 1))
        if at >= 0:
            best = max(best, at + len(pattern))
    for pattern in (b"\r\r", b"\n\r"):
        at = data.rfind(pattern, max(start, best - 1))
        if at == len(data) - 2 and not final:  # an LF may follow that CR: the blank line before it, if any
            at = data.rfind(pattern, max(start, best - 1), len(data) - 1)  # (a run of CR blank lines: issue 31)
        end = at + 2
        if at >= 0 and (data[end : end + 1] not in (b"\n", b"") or final and end == len(data)) and end > best:
            best = end
    return best


def line_cut(data: bytes, start: int, fresh: bool = False) -> int:
    """Where the last line end of ``data`` at or after ``start`` ends (0: none), as ``sse_cut``."""
    best = data.rfind(b"\n", start) + 1
    at = data.rfind(b"\r", start)
    if at >= 0 and at + 1 < len(data) and data[at + 1] != 0x0A and at + 1 > best:
        best = at + 1
    return best


#: The first bytes of a chunk searched for where the frame the held bytes began ends, doubled until found.
PROBE = 16 * 1024


def piece_bytes(data: bytes, start: int, end: int) -> bytes:
    """A piece's bytes on their own (a copy only when it is part of ``data``)."""
    return data if start == 0 and end == len(data) else data[start:end]


def pieces(chunks: Iterator[bytes], cut: Callable[[bytes, int, bool], int]) -> Iterator[Piece]:
    """``chunks`` re-cut into pieces that each end where ``cut`` says a frame may end (``base.Piece``).

    The last piece is whatever follows the last cut (it may be empty). What is held (the rest of the
    last cut) always starts where a frame may. While it is no longer than the next chunk, the frame
    it begins is ended first: the chunk's first ``PROBE`` bytes (doubled until a cut is found, with
    the three held bytes before them, where a cut may straddle the boundary) say where, the held bytes
    and the chunk's bytes up to there are joined as one piece, and the chunk from there to its last
    cut is the next, not copied. A frame longer than a chunk is gathered whole before it is handed on,
    each further chunk searched once (with the three bytes before it): each byte is searched at most
    a few times (the probes double), so that stays linear.
    """
    held: list[bytes] = []
    held_size = 0
    tail = b""  # the last bytes held
    for chunk in chunks:
        fresh = held_size <= len(chunk)
        start = 0  # where in the chunk what is not yet handed on starts (a frame may start there)
        if held and fresh:
            start = _first_cut(chunk, tail, len(tail) == held_size, cut)
            if start:  # the held frame ends there: it alone is joined
                head = b"".join((*held, chunk[:start]))
                yield head, 0, len(head), False
                held, held_size, tail = [], 0, b""
                del head
        if not held:
            window = chunk
            end = cut(chunk, start, True)
            if end <= start:  # no cut after ``start``: all of it is held
                rest = chunk[start:] if start else chunk
                held, held_size, tail = ([rest], len(rest), rest[-3:]) if rest else ([], 0, b"")
                continue
        elif fresh:  # no cut in the chunk's first bytes: the held bytes and the chunk searched as one
            window = b"".join((*held, chunk))
            end = cut(window, 0, True)
            if not end:
                held, held_size, tail = [window], len(window), window[-3:]
                continue
        else:
            window = tail + chunk
            end = cut(window, 0, False)
            if not end:
                held.append(chunk)
                held_size += len(chunk)
                tail = window[-3:]
                continue
            end += held_size - len(tail)
            held.append(chunk)
            window = b"".join(held)
        yield window, start, end, False
        rest = window[end:]
        held, held_size, tail = ([rest], len(rest), rest[-3:]) if rest else ([], 0, b"")
        del chunk, window, rest  # not held while the next chunk is read
    data = b"".join(held)
    yield data, 0, len(data), True


def _first_cut(chunk: bytes, tail: bytes, fresh: bool, cut: Callable[[bytes, int, bool], int]) -> int:
    """Where in ``chunk`` a frame begun before it (whose last bytes are ``tail``) may end, searching its
    first ``PROBE`` bytes, then twice as many, ...; 0 when it does not (or a cut falls before the chunk)."""
    size = PROBE
    while True:
        end = cut(tail + chunk[:size], 0, fresh) - len(tail)
        if end > 0:
            return end
        if size >= len(chunk):
            return 0
        size *= 2
