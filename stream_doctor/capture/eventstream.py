"""AWS event stream (``application/vnd.amazon.eventstream``): the binary framing of Bedrock streams.

Each message is ``[total length: u32][headers length: u32][prelude CRC32: u32][headers][payload]
[message CRC32: u32]``, big-endian; the prelude CRC covers the first 8 bytes and the message CRC
everything before it (https://docs.aws.amazon.com/AmazonS3/latest/API/RESTSelectObjectAppendix.html
and botocore ``eventstream.py``, whose limits this reader shares). A header is ``[name length: u8]
[name][value type: u8][value]``; the value types are 0/1 booleans, 2 byte, 3 short, 4 integer,
5 long, 6 byte array and 7 string (both with a u16 length), 8 timestamp and 9 UUID.

A frame's ``event`` is the ``:event-type`` header (``messageStart``, ``contentBlockDelta``,
``chunk`` …); an ``exception`` message gets its ``:exception-type`` (``throttlingException`` …)
and an ``error`` message its ``:error-code`` (with ``{"message": :error-message}`` as its value),
so the Bedrock adapter can turn both into stream errors. The capture has no lines: a frame's
``line`` is its ordinal, so ``capture.eventstream:7`` means the seventh message.

A bad prelude CRC or impossible lengths make the reader look for the next message whose prelude
checks out (the bytes in between are reported); a bad message CRC drops that one message (SDK
clients raise ``ChecksumMismatch`` there and end the stream); a message cut by the end of the
capture becomes an unusable frame, as a cut SSE event does. Headers botocore refuses (a name twice,
a name or string that is not UTF-8, an unknown value type, a header running past its block) make the
message an unusable frame; ``tests/capture/test_eventstream_botocore.py`` feeds both decoders the
same bytes and documents where they differ.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import orjson

from stream_doctor.capture._text import json_error
from stream_doctor.capture.base import NOT_JSON, Capture, Frame, InputProblem, Pos

_PRELUDE = struct.Struct(">III")
_CRC = struct.Struct(">I")
_new_tuple = tuple.__new__  # builds a Pos in C
_PRELUDE_SIZE = 12
_MIN_MESSAGE = 16  # a prelude and a message CRC, no headers, no payload
# botocore's limits (botocore/eventstream.py): a larger length is a corrupt prelude.
_MAX_HEADERS = 128 * 1024
_MAX_PAYLOAD = 24 * 1024 * 1024

#: Header value types with a fixed size (type -> bytes); 6 and 7 carry a u16 length.
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


class HeaderError(ValueError):
    """The headers block of one message cannot be decoded."""


#: How far past a corrupt prelude the reader looks for the next message before giving up.
_RESYNC_WINDOW = 1024 * 1024


def _lengths_ok(total: int, headers: int) -> bool:
    return total >= _MIN_MESSAGE and headers <= _MAX_HEADERS and 0 <= total - _MIN_MESSAGE - headers <= _MAX_PAYLOAD


def _prelude_ok(data: bytes, at: int) -> bool:
    """Whether a message could start at ``at``: its lengths are sane and its prelude CRC checks out."""
    if len(data) - at < _PRELUDE_SIZE:
        return False
    total, headers, crc = _PRELUDE.unpack_from(data, at)
    return _lengths_ok(total, headers) and zlib.crc32(data[at : at + 8]) == crc


def decode_headers(block: bytes) -> dict[str, Any]:
    """The headers of one message: name -> value (strings decoded, byte arrays kept as bytes)."""
    headers: dict[str, Any] = {}
    at, end = 0, len(block)
    while at < end:
        size = block[at]
        at += 1
        if at + size + 1 > end:
            raise HeaderError("a header name runs past the end of the headers")
        name = _utf8(block[at : at + size], "a header name")
        if name in headers:  # botocore raises DuplicateHeader: the SDK's stream ends there
            raise HeaderError(f"header {name!r} appears twice")
        at += size
        kind = block[at]
        at += 1
        value: Any
        if kind in (6, 7):
            if at + 2 > end:
                raise HeaderError(f"header {name!r} has no value length")
            (length,) = struct.unpack_from(">H", block, at)
            at += 2
            if at + length > end:
                raise HeaderError(f"header {name!r} runs past the end of the headers")
            raw = block[at : at + length]
            value = _utf8(raw, f"the value of header {name!r}") if kind == 7 else raw
            at += length
        elif kind in _FIXED:
            width = _FIXED[kind]
            if at + width > end:
                raise HeaderError(f"header {name!r} runs past the end of the headers")
            raw = block[at : at + width]
            value = kind == 0 if kind in (0, 1) else int.from_bytes(raw, "big", signed=kind in (2, 3, 4, 5, 8))
            if kind == 9:
                value = raw.hex()
            at += width
        else:
            raise HeaderError(f"header {name!r} has unknown value type {kind}")
        headers[name] = value
    return headers


def _utf8(raw: bytes, what: str) -> str:
    # the specification's strings are UTF-8; botocore decodes them strictly and its stream ends on one that is not
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HeaderError(f"{what} is not UTF-8 (byte {exc.start})") from None


def _sniff(head: bytes) -> tuple[int, str]:
    if len(head) < _PRELUDE_SIZE:
        return 0, "shorter than an event stream prelude"
    if not _prelude_ok(head, 0):
        return 0, "no event stream prelude (its CRC32 does not check out)"
    return 100, ""


#: How many distinct header blocks one reading remembers decoded (a stream repeats a handful).
_HEADER_CACHE = 256


class _Read:
    __slots__ = ("data", "frames", "problems", "ended_cleanly", "headers")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.frames: list[Frame] = []
        self.problems: list[InputProblem] = []
        self.ended_cleanly = True
        # header block -> its headers and event name: every contentBlockDelta of a stream carries
        # the same bytes, decoded once (the dicts are only read)
        self.headers: dict[bytes, tuple[dict[str, Any], str | None]] = {}

    def pos(self, offset: int) -> Pos:
        number = len(self.frames) + 1
        return _new_tuple(Pos, (number, number, offset))

    def corrupt(self, at: int, message: str) -> None:
        self.problems.append(InputProblem("eventstream-corrupt", message, self.pos(at)))

    def resync(self, at: int) -> int:
        """The offset of the next plausible message after ``at`` (or the end of the data)."""
        data = self.data
        for start in range(at + 1, min(len(data) - _PRELUDE_SIZE + 1, at + _RESYNC_WINDOW)):
            if _prelude_ok(data, start):
                return start
        return len(data)

    def message(self, at: int) -> int:
        """Read the message at ``at``; returns where the next one starts."""
        data = self.data
        size = len(data)
        if size - at < _PRELUDE_SIZE:
            self.cut(at, f"the capture ends inside a message prelude ({size - at} of 12 bytes)")
            return size
        total, headers_size, prelude_crc = _PRELUDE.unpack_from(data, at)
        actual = zlib.crc32(data[at : at + 8])
        if actual != prelude_crc or not _lengths_ok(total, headers_size):
            why = (
                f"prelude CRC32 is {prelude_crc:#010x}, the bytes give {actual:#010x}"
                if actual != prelude_crc
                else f"impossible lengths (total {total}, headers {headers_size})"
            )
            following = self.resync(at)
            skipped = (
                f"{following - at} bytes skipped to the next message that checks out"
                if following < size
                else f"the remaining {size - at} bytes hold no message that checks out and were not read"
            )
            self.corrupt(at, f"event stream message at byte {at}: {why}; {skipped}")
            return following
        if at + total > size:
            self.cut(at, f"the capture ends inside a message ({size - at} of its {total} bytes)", total, headers_size)
            return size
        end: int = at + total
        (message_crc,) = _CRC.unpack_from(data, end - 4)
        actual = zlib.crc32(data[at : end - 4])
        headers_end = at + _PRELUDE_SIZE + headers_size
        block = data[at + _PRELUDE_SIZE : headers_end]
        header_error: str | None = None
        known = self.headers.get(block)
        if known is not None:
            headers, event = known
        else:
            try:
                headers = decode_headers(block)
            except HeaderError as exc:
                headers = {}
                header_error = str(exc)
            event = _event_name(headers)
            if header_error is None and len(self.headers) < _HEADER_CACHE:
                self.headers[block] = headers, event
        if actual != message_crc:
            shown = f" ({event})" if event else ""
            self.problems.append(
                InputProblem(
                    "eventstream-crc",
                    f"message{shown} at byte {at}: message CRC32 is {message_crc:#010x}, the bytes give "
                    f"{actual:#010x}; its payload cannot be trusted and was not read",
                    self.pos(at),
                )
            )
            return end
        payload = data[headers_end : end - 4]
        where = self.pos(at)
        if header_error is not None:
            self.frames.append(Frame(where, payload, NOT_JSON, f"undecodable event stream headers: {header_error}"))
            return end
        self.frames.append(_frame(where, headers, payload, event))
        return end

    def cut(self, at: int, message: str, total: int = 0, headers_size: int = 0) -> None:
        """The capture stops inside a message: a frame nobody can use, and the cut reported."""
        data = self.data
        where = self.pos(at)
        event = None
        if total and len(data) >= at + _PRELUDE_SIZE + headers_size:
            try:
                event = _event_name(decode_headers(data[at + _PRELUDE_SIZE : at + _PRELUDE_SIZE + headers_size]))
            except HeaderError:
                pass
        self.frames.append(Frame(where, data[at:], NOT_JSON, "not JSON: the message is cut off", event))
        self.problems.append(InputProblem("unterminated-event", message, where))
        self.ended_cleanly = False


def _event_name(headers: dict[str, Any]) -> str | None:
    kind = headers.get(":message-type", "event")
    name = headers.get(
        ":event-type" if kind == "event" else ":exception-type" if kind == "exception" else ":error-code"
    )
    return name if isinstance(name, str) else None


def _frame(where: Pos, headers: dict[str, Any], payload: bytes, event: str | None) -> Frame:
    if headers.get(":message-type") == "error":
        # No payload: the error travels in headers. Give it the shape of an exception payload.
        message = headers.get(":error-message")
        value = {"message": message if isinstance(message, str) else None}
        return Frame(where, payload, value, None, event)
    if not payload:
        return Frame(where, payload, {}, None, event)
    try:
        return Frame(where, payload, orjson.loads(payload), None, event)
    except orjson.JSONDecodeError as exc:
        return Frame(where, payload, NOT_JSON, json_error(exc), event)


def read_eventstream(data: bytes, path: str) -> Capture:
    from stream_doctor.capture.limits import current, too_many_frames

    state = _Read(data)
    at = 0
    max_frames = current().max_frames
    while at < len(data):
        at = state.message(at)
        if len(state.frames) > max_frames:
            raise too_many_frames(current())
    return Capture(
        path,
        EventStreamReader.name,
        len(data),
        state.frames,
        problems=state.problems,
        ended_cleanly=state.ended_cleanly,
    )


class EventStreamReader:
    """Reader for ``application/vnd.amazon.eventstream`` bodies (Bedrock's streaming responses)."""

    name = "eventstream"
    title = "AWS event stream (binary, application/vnd.amazon.eventstream)"

    def sniff(self, head: bytes) -> int:
        return _sniff(head)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        return read_eventstream(data, path)


READER = EventStreamReader()


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event stream message with string headers and correct CRCs (for tests and fixtures)."""
    block = b"".join(
        bytes([len(name.encode())]) + name.encode() + b"\x07" + struct.pack(">H", len(value.encode())) + value.encode()
        for name, value in headers.items()
    )
    total = _PRELUDE_SIZE + len(block) + len(payload) + 4
    prelude = struct.pack(">II", total, len(block))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + block + payload
    return body + struct.pack(">I", zlib.crc32(body))
