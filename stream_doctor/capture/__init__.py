"""Capture stage: bytes on disk to frames with positions (file, line, byte offset).

``load`` reads a file (or stdin), undoes gzip, picks a container reader (forced by name, or the
one whose ``sniff`` is surest) and lets it cut the bytes into frames. Anything that stops the
capture from being read at all is a ``CaptureError`` with a one-line message, never a traceback.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from functools import cache
from typing import Any, cast

from stream_doctor.capture import limits as _limits
from stream_doctor.capture.base import (
    BODY_READERS,
    KEPT_BODIES,
    Body,
    Capture,
    CaptureError,
    InteractionsReader,
    Reader,
    StreamingReader,
    keep_file_body,
)
from stream_doctor.capture.chunks import Origin
from stream_doctor.capture.chunks import head as read_head
from stream_doctor.capture.streamed import Interactions, ManyTurns, Streamed
from stream_doctor.util.registry import LazyRegistry

#: Container readers by the name ``--container`` takes, each imported on first use. On equal sniff
#: scores the first wins.
READERS: LazyRegistry[Reader] = LazyRegistry(
    {
        "sse": "stream_doctor.capture.sse:READER",
        "jsonl": "stream_doctor.capture.jsonl:JSONL_READER",
        "envelope": "stream_doctor.capture.jsonl:ENVELOPE_READER",
        "json": "stream_doctor.capture.json_array:READER",
        "eventstream": "stream_doctor.capture.eventstream:READER",
        "prefixed": "stream_doctor.capture.prefixed_lines:READER",
        "har": "stream_doctor.capture.har:READER",
        "vcr": "stream_doctor.capture.vcr:READER",
        "recording": "stream_doctor.capture.recordings:READER",
    }
)
CONTAINERS = tuple(READERS)


def candidates(head: bytes, names: Iterable[str] | None = None) -> list[str]:
    """The readers (of ``names``, default all, in their order) whose ``sniff`` could give ``head`` a score:
    those whose start words (``capture/starts/<name>.py``, a necessary condition of their ``sniff``, which
    reads them too) allow it, and any without such words (the binary event stream)."""
    return [name for name in (READERS if names is None else names) if _could_be(name, head)]


def _could_be(name: str, head: bytes) -> bool:
    words = _start_words(name)
    return words is None or bool(words.could_be(head))


@cache
def _start_words(name: str) -> Any:
    """The module of the reader ``name``'s start words; None for a reader that has none."""
    try:
        return importlib.import_module(f"stream_doctor.capture.starts.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"stream_doctor.capture.starts.{name}":
            raise
        return None


def sniff_scores(head: bytes, names: Iterable[str] | None = None) -> dict[str, int]:
    """Each reader's (of ``names``, default all) score for ``head``, in order; 0 for one it cannot be."""
    asked = tuple(READERS if names is None else names)
    possible = set(candidates(head, asked))
    return {name: READERS[name].sniff(head) if name in possible else 0 for name in asked}


#: How much of the (decompressed) capture the readers' ``sniff`` sees.
HEAD_SIZE = 64 * 1024


def load(
    path: str,
    container: str | None = None,
    data: bytes | None = None,
    limits: _limits.Limits | None = None,
    bodies: bool = False,
) -> Capture:
    """Read the capture at ``path`` ("-" for stdin) into frames, under ``limits`` (see ``capture.limits``).

    ``container`` forces a reader by name; otherwise the format is sniffed from the first 64 KiB.
    ``data``, when given, is the capture's content and ``path`` only the name positions carry
    (the library API replays bytes held in memory). Only a regular file is read; a FIFO, a device
    or a socket is a CaptureError.

    ``bodies``: ``capture.bodies`` also holds each response body as its client received it, with its
    frames' byte spans (``Body``), as the reader decoded it: every stream body of a HAR file, cassette
    or recording, or the file itself (gzip undone) when it is one bare stream. An envelope's records
    are no response body. It holds every body's bytes: for tests and tools that feed real clients, not
    for a replay.
    """
    kept: list[Body] | None = [] if bodies else None
    token = KEPT_BODIES.set(kept)
    try:
        opened = open_capture(path, container, data, limits)
        capture = opened.whole() if isinstance(opened, (Streamed, Interactions)) else opened
    finally:
        KEPT_BODIES.reset(token)
    capture.bodies = kept
    return capture


def open_capture(
    path: str, container: str | None = None, data: bytes | None = None, limits: _limits.Limits | None = None
) -> Capture | Streamed | Interactions:
    """As ``load``, but a capture whose reader can read it piece by piece comes back ``Streamed``: its
    frames are read as they are used (the replay's common path), not held in a list; one of HTTP
    exchanges (HAR, cassettes) comes back as ``Interactions``, read one interaction at a time."""
    limits = limits or _limits.DEFAULT
    token = _limits.CURRENT.set(limits)
    try:
        origin = Origin(path, data, limits)
        head, chunks = read_head(origin.chunks(), HEAD_SIZE)
        if not head:
            raise CaptureError("the capture is empty" + (" (once decompressed)" if origin.compressed else ""))
        try:
            reader = _forced(container) if container is not None else _sniffed(head)
        except CaptureError:
            for _ in chunks:  # a cap the rest would reach comes first, as when the file is read whole
                pass
            raise
        name = "<stdin>" if path == "-" else path
        if getattr(reader, "stream", None) is not None:
            return Streamed(origin, cast(StreamingReader, reader), name, chunks)
        if getattr(reader, "turns", None) is not None:
            return Interactions(origin, cast(InteractionsReader, reader), name, origin.whole(chunks))
        whole = origin.whole(chunks)
        capture = reader.read(whole, name)
        keep_file_body(capture, whole)
    finally:
        _limits.CURRENT.reset(token)
    capture.compressed = origin.compressed
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
    for name in candidates(head):
        reader = READERS[name]
        score = reader.sniff(head)
        if score > best_score:
            best, best_score = reader, score
    if best is not None:
        return best
    not_text = _not_text(head)
    if not_text is not None:  # each text reader's reason would quote the bytes: one line for the binary one
        binary = READERS["eventstream"].reject_reason(head)
        raise CaptureError(
            f"{UNRECOGNISED}: {not_text}, and not AWS's event stream, the one binary format: {binary}; "
            "force one with --container"
        )
    # Say why each reader declined; readers that declined for the same reason share one entry.
    reasons: dict[str, list[str]] = {}
    for name, reader in READERS.items():
        reasons.setdefault(reader.reject_reason(head), []).append(name)
    tried = "; ".join(f"{', '.join(names)}: {reason}" for reason, names in reasons.items())
    raise CaptureError(f"{UNRECOGNISED} (tried {tried}); force one with --container")


#: How a capture no reader recognises is reported (``engine.replay_many`` shortens it in a folder).
UNRECOGNISED = "could not recognise the capture format"


def _not_text(head: bytes) -> str | None:
    """Why ``head`` is not text any text format could hold (a NUL byte, bytes that are not UTF-8), or None."""
    nul = head.find(b"\0")
    if nul >= 0:
        return f"the file is binary (a NUL byte at offset {nul})"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.reason != "unexpected end of data":  # not a character cut by the end of the head
            return f"the file is not UTF-8 text (byte 0x{head[error.start]:02x} at offset {error.start})"
    return None


__all__ = [
    "BODY_READERS",
    "CONTAINERS",
    "READERS",
    "Body",
    "Capture",
    "CaptureError",
    "UNRECOGNISED",
    "Interactions",
    "ManyTurns",
    "Streamed",
    "candidates",
    "load",
    "open_capture",
    "sniff_scores",
]
