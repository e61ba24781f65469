"""Capture stage: bytes on disk to frames with positions (file, line, byte offset).

``load`` reads a file (or stdin), undoes gzip, picks a container reader (forced by name, or the
one whose ``sniff`` is surest) and lets it cut the bytes into frames. Anything that stops the
capture from being read at all is a ``CaptureError`` with a one-line message, never a traceback.
"""

from __future__ import annotations

import sys

from stream_doctor.capture import limits as _limits
from stream_doctor.capture.base import Capture, CaptureError, Reader
from stream_doctor.capture.eventstream import READER as EVENTSTREAM_READER
from stream_doctor.capture.har import READER as HAR_READER
from stream_doctor.capture.json_array import READER as JSON_ARRAY_READER
from stream_doctor.capture.jsonl import ENVELOPE_READER, JSONL_READER
from stream_doctor.capture.prefixed_lines import READER as PREFIXED_READER
from stream_doctor.capture.recording import READER as RECORDING_READER
from stream_doctor.capture.sse import READER as SSE_READER
from stream_doctor.capture.vcr import READER as VCR_READER

#: Container readers by the name ``--container`` takes. On equal sniff scores the first wins.
READERS: dict[str, Reader] = {
    reader.name: reader
    for reader in (
        SSE_READER,
        JSONL_READER,
        ENVELOPE_READER,
        JSON_ARRAY_READER,
        EVENTSTREAM_READER,
        PREFIXED_READER,
        HAR_READER,
        VCR_READER,
        RECORDING_READER,
    )
}
CONTAINERS = tuple(READERS)

#: The readers a HAR entry's or a cassette interaction's response body can be in (one stream each).
BODY_READERS: dict[str, Reader] = {name: READERS[name] for name in ("sse", "jsonl", "json", "eventstream", "prefixed")}

#: How much of the (decompressed) capture the readers' ``sniff`` sees.
HEAD_SIZE = 64 * 1024

_GZIP_MAGIC = b"\x1f\x8b"


def load(
    path: str, container: str | None = None, data: bytes | None = None, limits: _limits.Limits | None = None
) -> Capture:
    """Read the capture at ``path`` ("-" for stdin) into frames, under ``limits`` (see ``capture.limits``).

    ``container`` forces a reader by name; otherwise the format is sniffed from the first 64 KiB.
    ``data``, when given, is the capture's content and ``path`` only the name positions carry
    (the library API replays bytes held in memory). Only a regular file is read; a FIFO, a device
    or a socket is a CaptureError.
    """
    limits = limits or _limits.DEFAULT
    token = _limits.CURRENT.set(limits)
    try:
        if data is None:
            raw = _read_bytes(path, limits)
        elif len(data) > limits.max_bytes:
            raise _limits.too_big(limits)
        else:
            raw = data
        compressed = None
        if raw.startswith(_GZIP_MAGIC):
            raw = _limits.gunzip(raw, limits)
            compressed = "gzip"
        if not raw:
            raise CaptureError("the capture is empty" + (" (once decompressed)" if compressed else ""))
        reader = _forced(container) if container is not None else _sniffed(raw[:HEAD_SIZE])
        capture = reader.read(raw, "<stdin>" if path == "-" else path)
    finally:
        _limits.CURRENT.reset(token)
    capture.compressed = compressed
    return capture


def _read_bytes(path: str, limits: _limits.Limits | None = None) -> bytes:
    """The bytes of the file at ``path`` ("-": standard input), under ``limits``."""
    return _limits.read_file(path, limits or _limits.CURRENT.get(), sys.stdin.buffer if path == "-" else None)


def _forced(container: str) -> Reader:
    try:
        return READERS[container]
    except KeyError:
        raise CaptureError(f"unknown container {container!r} (choose from {', '.join(CONTAINERS)})") from None


def _sniffed(head: bytes) -> Reader:
    best: Reader | None = None
    best_score = 0
    for reader in READERS.values():
        score = reader.sniff(head)
        if score > best_score:
            best, best_score = reader, score
    if best is not None:
        return best
    # Say why each reader declined; readers that declined for the same reason share one entry.
    reasons: dict[str, list[str]] = {}
    for name, reader in READERS.items():
        reasons.setdefault(reader.reject_reason(head), []).append(name)
    tried = "; ".join(f"{', '.join(names)}: {reason}" for reason, names in reasons.items())
    raise CaptureError(f"could not recognise the capture format (tried {tried}); force one with --container")


__all__ = ["CONTAINERS", "READERS", "Capture", "CaptureError", "load"]
