"""A capture as the minimizer edits it: the bytes before its first frame, one unit per frame, and a join.

A unit is the frame's own bytes as the file holds them (an SSE event with its blank line, a JSON
line, a JSON array's element), so a candidate built from a subset of units is byte for byte what the
file held for those frames: padding, comments and line endings that a finding may depend on stay.
A unit whose payload is JSON that stands verbatim in its bytes can also be edited as a value
(``edited``): only that payload is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import orjson

from stream_doctor.capture.base import NOT_JSON, Capture, Frame
from stream_doctor.util import jsontext

#: The containers whose layout a subset of frames can keep; any other capture is minimized as an envelope.
KEPT_CONTAINERS = frozenset({"sse", "jsonl", "envelope", "json"})


@dataclass(frozen=True, slots=True)
class Unit:
    """One frame's bytes in the file; ``payload`` is its JSON text inside them (None: not editable)."""

    text: bytes
    kind: str  # the frame's kind: "event", "request", "execute", "result"
    turn: int  # 1-based, as conversation.build.split numbers the turns
    payload: bytes | None = None
    call: int | None = None  # the ordinal of the call that owns this frame alone (``calls``), if one does

    def value(self) -> Any:
        """The payload decoded (a dict for an envelope record or a provider event)."""
        assert self.payload is not None
        return orjson.loads(self.payload)

    def edited(self, value: Any) -> Unit:
        """The unit with its payload replaced by ``value`` (written compactly, any depth)."""
        assert self.payload is not None
        payload = jsontext.dumps(value)
        return Unit(self.text.replace(self.payload, payload, 1), self.kind, self.turn, payload, self.call)


@dataclass(frozen=True, slots=True)
class Layout:
    """How units join back into a capture of the same container."""

    container: str
    head: bytes  # before the first frame: an envelope's header line, a JSON array's ``[``
    tail: bytes  # after the last frame's bytes: a JSON array's ``]``

    def header(self) -> dict[str, Any] | None:
        """An envelope's header record, or None (another container, no header, not a JSON object)."""
        if self.container != "envelope" or not self.head.strip():
            return None
        try:
            header = orjson.loads(self.head)
        except orjson.JSONDecodeError:
            return None
        return header if isinstance(header, dict) else None

    def join(self, units: Iterable[Unit]) -> bytes:
        if self.container == "json":
            return self.head + b",".join(unit.text for unit in units) + self.tail
        return self.head + b"".join(unit.text for unit in units)


def cut(data: bytes, capture: Capture, turns: list[int]) -> tuple[Layout, list[Unit]]:
    """``data`` (the capture's decompressed bytes) cut at its frames' offsets; ``turns`` holds each
    frame's turn. The container must be one of ``KEPT_CONTAINERS``."""
    frames = capture.frames
    starts = [frame.pos.offset for frame in frames]
    if capture.container == "json":
        head, tail = data[: starts[0]] if starts else b"[", b""
        if head.rstrip().endswith(b"[") and starts:
            head = head.rstrip()
        ends = [*starts[1:], len(data)]
        texts = [data[start:end].rstrip().rstrip(b",").rstrip() for start, end in zip(starts, ends, strict=True)]
        if texts and texts[-1].endswith(b"]"):  # a whole array; a cut one has no closing bracket
            texts[-1], tail = texts[-1][:-1].rstrip(), data[data.rindex(b"]") :]
        units = [_unit(text, frame, turn, True) for text, frame, turn in zip(texts, frames, turns, strict=True)]
        return Layout("json", head or b"[", tail), units
    ends = [*starts[1:], len(data)]
    units = [
        _unit(data[start:end], frame, turn, capture.container != "sse")
        for start, end, frame, turn in zip(starts, ends, frames, turns, strict=True)
    ]
    return Layout(capture.container, data[: starts[0]] if starts else data, b""), units


def _unit(text: bytes, frame: Frame, turn: int, whole: bool) -> Unit:
    """``whole``: the unit is one JSON text (a JSON line, an array element), its payload all of it but
    the line end; else (SSE) the frame's payload where it stands verbatim in the bytes."""
    payload: bytes | None
    if whole:
        payload = text.rstrip(b"\r\n")
    elif frame.value is NOT_JSON or not frame.data or text.count(frame.data) != 1:
        payload = None
    else:
        payload = frame.data
    if payload is not None:
        try:
            orjson.loads(payload)
        except orjson.JSONDecodeError:
            payload = None
    return Unit(text, frame.kind, turn, payload)
