"""How much one capture may hold: decompressed bytes and frames, enforced while reading, never after.

A capture comes from strangers (a bug report's attachment, a fork's fixture): a 1 MB ``.gz`` can
decompress to gigabytes, and a file of pings to tens of millions of frames. ``load`` reads under a
``Limits`` (the defaults are generous for real logs; ``--max-bytes``/``--max-frames`` and the
configuration change them), so reaching one is a one-line ``CaptureError`` within seconds and
without allocating the whole thing. Only regular files (and ``-`` for stdin) are read.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import BinaryIO

from stream_doctor.capture.base import CaptureError
from stream_doctor.util.opener import KIND_WORDS as KIND_WORDS  # re-exported: reporters and discovery name kinds here
from stream_doctor.util.opener import TooLarge, UnreadableFile, opened, read_capped
from stream_doctor.util.opener import file_kind as file_kind
from stream_doctor.util.opener import not_regular as not_regular

DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB once decompressed
DEFAULT_MAX_FRAMES = 10_000_000


@dataclass(frozen=True)
class Limits:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_frames: int = DEFAULT_MAX_FRAMES


DEFAULT = Limits()

#: The limits of the capture being read; ``load`` sets them, the readers of bodies inside a HAR or a
#: cassette (and the frame counters) read them.
CURRENT: ContextVar[Limits] = ContextVar("stream_doctor_limits", default=DEFAULT)


def current() -> Limits:
    return CURRENT.get()


#: What a size's unit multiplies by, decided once for every option and configuration key that takes
#: a size: ``KB``/``MB``/``GB``/``TB`` are powers of ten (SI), ``KiB``/``MiB``/``GiB``/``TiB`` (and
#: Kubernetes' ``Ki``/``Mi``/``Gi``) powers of two (IEC), and a bare ``K``/``M``/``G``/``T`` is a power of
#: two, as GNU dd and sort read it (``--max-bytes 512M`` always meant 512 MiB). Case does not matter.
SIZE_UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1} | {
    letter + suffix: 1000**power if suffix == "b" else 1 << (10 * power)
    for power, letter in enumerate("kmgt", start=1)
    for suffix in ("", "b", "i", "ib")
}

SIZE_EXPECTED = "expected a size such as 65536, 512KiB or 64MiB"


#: a number (thousands grouped by commas as ``human`` writes them, or by underscores), a unit
@cache
def _size() -> re.Pattern[str]:
    """Compiled on first use: only a size given as text (``--max-bytes 64MiB``, a configuration's) asks."""
    return re.compile(r"\s*((?:\d{1,3}(?:,\d{3})+|\d[\d_]*)(?:\.\d+)?|\.\d+)\s*([a-z]*)\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``1073741824``, ``512M``, ``1GiB``, ``1.5 GB``, ``64kb``, ``1,024 bytes`` → bytes (``SIZE_UNITS``; a
    fraction of a byte is dropped); ValueError saying what a size looks like when it is none of those."""
    match = _size().fullmatch(text)
    if match is None:
        raise ValueError(f"not a size: {SIZE_EXPECTED}")
    number, unit = match.group(1).replace("_", "").replace(",", ""), match.group(2).lower()
    if unit not in SIZE_UNITS:
        raise ValueError(SIZE_EXPECTED)
    from fractions import Fraction  # not at import: a replay that is given no size never needs it

    size = int(Fraction(number) * SIZE_UNITS[unit])  # exact: 1.1 GB is 1,100,000,000 bytes, not a float's
    if size < 1:
        raise ValueError(f"{SIZE_EXPECTED} (at least one byte)")
    return size


def human(size: int, rounded: bool = False) -> str:
    """A byte count as people read it, in powers of two: exactly (``64 MiB``, else ``1,234 bytes``), which
    ``parse_size`` reads back, or ``rounded`` to one decimal for a report (``1.5 KiB``, ``812 B``)."""
    if rounded:
        if size < 1 << 10:
            return f"{size} B"
        return f"{size / (1 << 10):.1f} KiB" if size < 1 << 20 else f"{size / (1 << 20):.1f} MiB"
    for unit, multiple in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= multiple and size % multiple == 0:
            return f"{size // multiple} {unit}"
    return f"{size:,} byte{'' if size == 1 else 's'}"


class LimitExceeded(CaptureError):
    """The capture is over a limit: fatal for the whole capture, even when met inside one HAR body."""


def too_big(limits: Limits, compressed: bool = False) -> LimitExceeded:
    once = " once decompressed" if compressed else ""
    return LimitExceeded(
        f"the capture is larger than {human(limits.max_bytes)}{once} (raise the limit with --max-bytes)"
    )


def too_many_frames(limits: Limits) -> LimitExceeded:
    return LimitExceeded(
        f"the capture holds more than {limits.max_frames:,} frames (raise the limit with --max-frames)"
    )


#: A body stored compressed inside a HAR file, a cassette or a recording is decoded whole before it is cut into frames
#: (they point into it, and a recorder's body may be any container), so one such body may make at most
#: this share of ``max_bytes`` (128 MiB of the default 1 GiB), which keeps the decoded copy and the reading
#: of it within a few hundred MB; a plain capture file, gzip or not, is read a chunk at a time instead.
DECODED_BODY_SHARE = 8


def decoded_body_cap(limits: Limits) -> int:
    """How long one body inside a capture may be once its content codings are undone."""
    return max(1, limits.max_bytes // DECODED_BODY_SHARE)


def body_too_big(limits: Limits) -> LimitExceeded:
    return LimitExceeded(
        f"a compressed body in the capture is larger than {human(decoded_body_cap(limits))} once decoded, "
        f"the limit for one body (1/{DECODED_BODY_SHARE} of --max-bytes; raise it with --max-bytes)"
    )


class Budget:
    """How many more bytes one capture's expansions may make: base64, gzip, deflate, br, zstd and YAML
    ``!binary``, of request and response bodies alike. One per capture: it starts at ``max_bytes`` less
    the file's own bytes (the file and everything decoded from it are what the capture holds) and each
    expansion takes what it makes as it makes it, so the decoded bodies of a HAR file or a cassette
    together never pass the cap, whatever each one alone would."""

    __slots__ = ("limits", "left")

    def __init__(self, limits: Limits | None = None, used: int = 0) -> None:
        self.limits = limits or current()
        self.left = max(0, self.limits.max_bytes - used)

    def take(self, size: int) -> None:
        """Count ``size`` more bytes made; LimitExceeded when they do not fit."""
        if size > self.left:
            self.left = 0
            raise too_big(self.limits, compressed=True)
        self.left -= size


def read_file(path: str, limits: Limits, stdin: BinaryIO | None = None, probe: bool = False) -> bytes:
    """The bytes of a regular file (or of ``stdin``), refusing anything past ``limits.max_bytes``.

    With ``probe`` the file is only opened and checked (``file_chunks`` reads it later); b"" is returned.
    """
    if stdin is not None:
        return _read_capped(stdin, limits)
    with _opened(path, limits) as file:
        return b"" if probe else _read_capped(file, limits)


def file_chunks(path: str, limits: Limits, size: int) -> Iterator[bytes]:
    """The bytes of a regular file, ``size`` at a time, refusing anything past ``limits.max_bytes``."""
    total = 0
    with _opened(path, limits) as file:
        while True:
            try:
                chunk = file.read(min(size, limits.max_bytes + 1 - total))
            except OSError as exc:
                raise CaptureError(f"cannot read the file: {exc.strerror or exc}") from None
            if not chunk:
                return
            total += len(chunk)
            if total > limits.max_bytes:
                raise too_big(limits)
            yield chunk


@contextmanager
def _opened(path: str, limits: Limits) -> Iterator[BinaryIO]:
    """The regular file at ``path``, open for reading (CaptureError for anything else, or one over the cap)."""
    try:
        with opened(path, limits.max_bytes) as file:
            yield file
    except TooLarge:
        raise too_big(limits) from None
    except UnreadableFile as error:
        if error.kind == "directory":
            raise CaptureError("is a directory, not a capture file") from None
        if error.kind is not None:
            raise CaptureError(
                f"is {KIND_WORDS[error.kind]}, not a capture file (only regular files are read)"
            ) from None
        raise CaptureError(str(error)) from None


def _read_capped(file: BinaryIO, limits: Limits) -> bytes:
    try:
        return read_capped(file, limits.max_bytes)
    except TooLarge:
        raise too_big(limits) from None
    except UnreadableFile as error:
        raise CaptureError(str(error)) from None


def gunzip(raw: bytes, limits: Limits | None = None) -> bytes:
    """Decompress gzip data (every member) without ever holding more than ``max_bytes`` of output."""
    limits = limits or current()
    out: list[bytes] = []
    total = 0
    data = raw
    while data:
        decompressor = zlib.decompressobj(wbits=31)
        pending = data
        while True:
            try:
                chunk = decompressor.decompress(pending, limits.max_bytes + 1 - total)
            except zlib.error as exc:
                raise CaptureError(f"corrupt gzip data: {exc}") from None
            out.append(chunk)
            total += len(chunk)
            if total > limits.max_bytes:
                raise too_big(limits, compressed=True)
            pending = decompressor.unconsumed_tail
            if decompressor.eof or not pending:
                if not decompressor.eof:
                    # drain what zlib still buffers, under the same cap
                    try:
                        rest = decompressor.flush(limits.max_bytes + 1 - total)
                    except zlib.error as exc:
                        raise CaptureError(f"corrupt gzip data: {exc}") from None
                    out.append(rest)
                    total += len(rest)
                    if total > limits.max_bytes:
                        raise too_big(limits, compressed=True)
                break
        if not decompressor.eof:
            raise CaptureError("the gzip data is cut off before its end (incomplete .gz file)")
        data = decompressor.unused_data.lstrip(b"\0")  # gzip allows zero padding between members
        if data and not data.startswith(b"\x1f\x8b"):
            break  # trailing garbage after the last member: gzip itself ignores it
    return b"".join(out)


def line_bound(data: bytes) -> int:
    """At most how many frames a line-based reader can cut ``data`` into (one per line)."""
    return data.count(b"\n") + data.count(b"\r") + 1


def event_bound(data: bytes) -> int:
    """At most how many SSE events ``data`` holds: an event ends at a blank line, i.e. two line ends in a row."""
    return data.count(b"\n\n") + data.count(b"\r\r") + data.count(b"\n\r") + 1


def check_bound(bound: int, limits: Limits | None = None) -> None:
    """Refuse before cutting ``data`` into frames when a cheap count of them (lines, blank lines: C speed,
    nothing allocated) is over the cap."""
    limits = limits or current()
    if bound > limits.max_frames:
        raise too_many_frames(limits)


def check_count(count: int, limits: Limits | None = None) -> None:
    limits = limits or current()
    if count > limits.max_frames:
        raise too_many_frames(limits)
