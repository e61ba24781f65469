"""HTTP content codings undone under a capture's expansion budget: gzip, deflate (zlib-wrapped or raw),
br (with the ``brotli`` package) and zstd (with ``zstandard``), stacked as a ``Content-Encoding`` lists them.

Every decoder makes its output a bounded piece at a time and stops at ``room`` bytes (``Overflow``),
so a body that would expand to gigabytes costs at most ``room`` before it is refused. A body a
coding cannot undo (damaged, cut short, a coding nobody implements, a library that is not
installed) is ``Undecodable``, saying why: the caller names the coding and reports it (SD008).
"""

from __future__ import annotations

import re
import zlib
from typing import Callable

#: How much output one step of a decoder may make before the total is checked against ``room``.
_STEP = 1 << 20
#: zstd's RLE blocks make 128 KiB from 4 bytes: input is fed this much at a time so that one call
#: (``zstandard``'s decompressobj has no output limit) makes at most a few MiB.
_ZSTD_FEED = 64

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ALIASES = {"x-gzip": "gzip", "x-deflate": "deflate"}
_TOKEN = re.compile(r"[^,\s]+")


class Overflow(Exception):
    """The decoded body is longer than the room it was given."""


class Undecodable(Exception):
    """A coding could not be undone, and why ("the brotli package is not installed"); the caller names the coding."""


def codings(value: str | None) -> list[str]:
    """The codings a ``Content-Encoding`` value lists, in the order they were applied (``identity`` dropped)."""
    found = [_ALIASES.get(token, token) for token in _TOKEN.findall((value or "").lower())]
    return [coding for coding in found if coding != "identity"]


def carries(data: bytes, coding: str) -> bool | None:
    """Whether ``data`` starts as ``coding``'s output does: True or False where the coding has a signature
    (gzip's and zstd's magic numbers, zlib's checked header), None where it has none (br, raw deflate)."""
    if coding == "gzip":
        return data.startswith(GZIP_MAGIC)
    if coding == "zstd":
        return data.startswith(ZSTD_MAGIC)
    if coding == "deflate" and _zlib_header(data):
        return True
    return None


def _zlib_header(data: bytes) -> bool:
    return len(data) >= 2 and data[0] & 0x0F == 8 and data[0] >> 4 <= 7 and (data[0] << 8 | data[1]) % 31 == 0


def undo(data: bytes, coding: str, room: int) -> bytes:
    """``data`` with one coding undone, at most ``room`` bytes (Overflow past it; Undecodable when it cannot)."""
    decoder = _DECODERS.get(coding)
    if decoder is None:
        raise Undecodable("stream-doctor does not know this coding")
    return decoder(data, room)


def _gzip(data: bytes, room: int) -> bytes:
    """Every gzip member (zero padding between them allowed, trailing garbage ignored as gzip does)."""
    out: list[bytes] = []
    total = 0
    while data:
        inflater = zlib.decompressobj(wbits=31)
        total += _inflate_all(inflater, data, room - total, out, "gzip")
        data = inflater.unused_data.lstrip(b"\0")
        if not data.startswith(GZIP_MAGIC):
            break
    return b"".join(out)


def _deflate(data: bytes, room: int) -> bytes:
    """A deflate body: zlib-wrapped as RFC 9110 says, or raw as some servers send it."""
    out: list[bytes] = []
    _inflate_all(zlib.decompressobj(15 if _zlib_header(data) else -15), data, room, out, "deflate")
    return b"".join(out)


def _inflate_all(inflater: object, data: bytes, room: int, out: list[bytes], coding: str) -> int:
    """Feed ``data`` to a zlib decompressor, a bounded piece of output at a time; how many bytes it made."""
    total = 0
    pending = data
    decompress: Callable[[bytes, int], bytes] = inflater.decompress  # type: ignore[attr-defined]
    try:
        while True:
            chunk = decompress(pending, min(_STEP, room + 1 - total))
            total += len(chunk)
            out.append(chunk)
            if total > room:
                raise Overflow
            pending = inflater.unconsumed_tail  # type: ignore[attr-defined]
            if inflater.eof or (not pending and not chunk):  # type: ignore[attr-defined]
                break
    except zlib.error as exc:
        raise Undecodable(f"the body cannot be decompressed ({exc})") from None
    if not inflater.eof:  # type: ignore[attr-defined]
        raise Undecodable("the body cannot be decompressed (it is cut off before the end of its compressed data)")
    return total


def _brotli(data: bytes, room: int) -> bytes:
    try:
        import brotli
    except ImportError:
        raise Undecodable("the brotli package is not installed (pip install brotli)") from None
    decompressor = brotli.Decompressor()
    if not hasattr(decompressor, "can_accept_more_data"):  # brotli < 1.2 cannot bound its output
        raise Undecodable("the installed brotli is older than 1.2 (pip install -U brotli)")
    out: list[bytes] = []
    total = 0
    pending = data
    try:
        # the whole input goes in once; then empty calls drain the output a step at a time, and one
        # that makes nothing before the end means the input ran out
        while True:
            chunk = decompressor.process(pending, output_buffer_limit=min(_STEP, room + 1 - total))
            total += len(chunk)
            out.append(chunk)
            if total > room:
                raise Overflow
            if decompressor.is_finished() or (not chunk and not pending):
                break
            pending = b""
    except brotli.error as exc:
        raise Undecodable(f"the body cannot be decompressed ({exc})") from None
    if not decompressor.is_finished():
        raise Undecodable("the body cannot be decompressed (it is cut off before the end of its compressed data)")
    return b"".join(out)


def _zstd(data: bytes, room: int) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise Undecodable("the zstandard package is not installed (pip install zstandard)") from None
    out: list[bytes] = []
    total = 0
    pending = data
    try:
        while pending:  # one frame after another, as a zstd stream may hold several
            decompressor = zstandard.ZstdDecompressor().decompressobj()
            at = 0
            while at < len(pending) and not decompressor.eof:
                chunk = decompressor.decompress(pending[at : at + _ZSTD_FEED])
                at += _ZSTD_FEED
                total += len(chunk)
                out.append(chunk)
                if total > room:
                    raise Overflow
            if not decompressor.eof:
                raise Undecodable(
                    "the body cannot be decompressed (it is cut off before the end of its compressed data)"
                )
            pending = decompressor.unused_data + pending[at:]
    except zstandard.ZstdError as exc:
        raise Undecodable(f"the body cannot be decompressed ({exc})") from None
    return b"".join(out)


_DECODERS: dict[str, Callable[[bytes, int], bytes]] = {
    "gzip": _gzip,
    "deflate": _deflate,
    "br": _brotli,
    "zstd": _zstd,
}
