"""The binary AWS event stream reader (``application/vnd.amazon.eventstream``)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from stream_doctor.capture import load
from stream_doctor.capture.base import NOT_JSON
from stream_doctor.capture.eventstream import READER, HeaderError, decode_headers, encode_message, read_eventstream

EVENT = {":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"}


def message(payload: bytes = b'{"contentBlockIndex":0,"delta":{"text":"hi"},"p":"abc"}', **headers: str) -> bytes:
    return encode_message({**EVENT, **headers}, payload)


def test_messages_become_frames_named_by_their_event_type() -> None:
    body = message() + message(b'{"p":"a","stopReason":"end_turn"}', **{":event-type": "messageStop"})
    capture = read_eventstream(body, "c")
    assert capture.container == "eventstream" and capture.problems == [] and capture.ended_cleanly
    assert [(f.event, f.value) for f in capture.frames] == [
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}, "p": "abc"}),
        ("messageStop", {"p": "a", "stopReason": "end_turn"}),
    ]
    first, second = capture.frames
    assert (first.pos.number, first.pos.line, first.pos.offset) == (1, 1, 0)
    assert (second.pos.number, second.pos.line, second.pos.offset) == (2, 2, len(message()))


def test_exception_and_error_messages() -> None:
    exception = encode_message(
        {":exception-type": "throttlingException", ":content-type": "application/json", ":message-type": "exception"},
        b'{"message":"Too many requests"}',
    )
    error = encode_message({":message-type": "error", ":error-code": "InternalFailure", ":error-message": "oops"}, b"")
    frames = read_eventstream(exception + error, "c").frames
    assert [(f.event, f.value) for f in frames] == [
        ("throttlingException", {"message": "Too many requests"}),
        ("InternalFailure", {"message": "oops"}),
    ]


def test_a_bad_message_crc_drops_that_message_only() -> None:
    bad = bytearray(message())
    bad[-10] ^= 0x01
    capture = read_eventstream(message() + bytes(bad) + message(), "c")
    assert len(capture.frames) == 2 and [p.kind for p in capture.problems] == ["eventstream-crc"]
    assert "contentBlockDelta" in capture.problems[0].message


def test_a_bad_prelude_skips_to_the_next_message() -> None:
    bad = bytearray(message())
    bad[9] ^= 0xFF  # the prelude CRC
    capture = read_eventstream(message() + bytes(bad) + message(), "c")
    assert len(capture.frames) == 2
    (problem,) = capture.problems
    assert problem.kind == "eventstream-corrupt" and f"{len(bad)} bytes skipped" in problem.message


def test_garbage_after_the_last_message() -> None:
    capture = read_eventstream(message() + b"\x00" * 40, "c")
    assert len(capture.frames) == 1
    assert [p.kind for p in capture.problems] == ["eventstream-corrupt"]


@pytest.mark.parametrize("keep", [5, 20, 60])
def test_a_message_cut_by_the_end_of_the_capture(keep: int) -> None:
    capture = read_eventstream(message() + message()[:keep], "c")
    assert not capture.ended_cleanly
    assert [p.kind for p in capture.problems] == ["unterminated-event"]
    cut = capture.frames[-1]
    assert cut.value is NOT_JSON and cut.pos.number == 2


def test_a_payload_that_is_not_json() -> None:
    (frame,) = read_eventstream(message(b"{nope"), "c").frames
    assert frame.value is NOT_JSON and frame.error and frame.event == "contentBlockDelta"


def test_every_header_value_type() -> None:
    block = b""
    for name, kind, value in [
        ("t", 0, b""),
        ("f", 1, b""),
        ("b", 2, b"\xff"),
        ("s", 3, struct.pack(">h", -2)),
        ("i", 4, struct.pack(">i", 7)),
        ("l", 5, struct.pack(">q", 1 << 40)),
        ("a", 6, struct.pack(">H", 2) + b"\x01\x02"),
        ("z", 7, struct.pack(">H", 2) + b"hi"),
        ("ts", 8, struct.pack(">q", 1700000000000)),
        ("u", 9, bytes(range(16))),
    ]:
        block += bytes([len(name)]) + name.encode() + bytes([kind]) + value
    assert decode_headers(block) == {
        "t": True,
        "f": False,
        "b": -1,
        "s": -2,
        "i": 7,
        "l": 1 << 40,
        "a": b"\x01\x02",
        "z": "hi",
        "ts": 1700000000000,
        "u": bytes(range(16)).hex(),
    }
    with pytest.raises(HeaderError):
        decode_headers(b"\x01x\x0c")
    with pytest.raises(HeaderError):
        decode_headers(b"\x01x\x07\x00\x09ab")


@pytest.mark.parametrize(
    ("block", "why"),
    [
        (b"\x01x\x00\x01x\x01", "appears twice"),  # botocore: DuplicateHeader
        (b"\x01\xff\x00", "not UTF-8"),  # a name; botocore: UnicodeDecodeError
        (b"\x01x\x07\x00\x02\xc3(", "not UTF-8"),  # a string value
    ],
)
def test_headers_botocore_refuses_are_refused(block: bytes, why: str) -> None:
    with pytest.raises(HeaderError, match=why):
        decode_headers(block)


def test_undecodable_headers_make_an_unusable_frame() -> None:
    headers = b"\x01x\x0c"
    total = 12 + len(headers) + 2 + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + b"{}"
    body += struct.pack(">I", zlib.crc32(body))
    (frame,) = read_eventstream(body, "c").frames
    assert frame.value is NOT_JSON and "headers" in (frame.error or "")


def test_sniff_needs_a_prelude_whose_crc_checks_out() -> None:
    assert READER.sniff(message()) == 100
    assert READER.sniff(b'data: {"a":1}\n\n') == 0 and READER.sniff(b"[]") == 0
    assert "CRC32" in READER.reject_reason(b"x" * 20)


def test_load_detects_the_binary_framing(tmp_path: Path) -> None:
    path = tmp_path / "capture.bin"
    path.write_bytes(message())
    assert load(str(path)).container == "eventstream"
