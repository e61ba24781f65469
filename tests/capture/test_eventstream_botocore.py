"""The event stream decoder (capture/eventstream.py) against botocore's own (``botocore.eventstream``).

Both sides get the same bytes: every ``.eventstream`` fixture, every event stream body of the corpus
(decoded through the project's own cassette and HAR readers), and hypothesis-generated messages
(headers of every value type, payloads of many sizes) with their mutations (cuts, flipped bytes,
CRC bytes included, lengths rewritten with and without a matching prelude CRC, garbage between
messages). botocore's ``EventStreamBuffer`` is fed the bytes in arbitrary pieces, as a response
arrives; our reader reads them whole.

What is compared: every message botocore decodes (its offset, headers and payload) must be a
message ours decodes with the same offset, headers and payload, and where botocore refuses (an
exception) or stops waiting for more bytes, ours must report that same message as corrupt, cut or
unusable. botocore raises at its first refusal and the SDK's stream ends there; ours reports it
and reads on (``read_eventstream``'s docstring), so nothing after botocore's first refusal is compared.

Where the two differ on purpose (``_DOCUMENTED``), ours follows the specification's words
(https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream,
"Event stream encoding"; the same framing in the S3 Select appendix and Smithy's event streams):

- *A header value or name longer than the headers block*: "headers byte-length: the byte length of
  the message headers" and each header is "header name byte-length, header name, header value type,
  value string byte-length, value": a header cannot end past the block. botocore slices its bytes
  and keeps what is there (a shorter string, a UUID of fewer than 16 bytes); ours refuses the
  message's headers, so the frame is unusable.
- *A total length smaller than its prelude, headers and CRC*: "total byte-length: the total byte
  length of the message, including the prelude, headers, payload and message CRC" (at least 16 plus
  the headers). botocore does not check it (its payload length goes negative); ours reports the
  prelude as impossible and looks for the next message.
- *UUID header values*: botocore hands the 16 bytes, ours their hex; the same value, compared as bytes.

A long run (new seeds each time)::

    STREAM_DOCTOR_FUZZ_EXAMPLES=100000 STREAM_DOCTOR_FUZZ_RANDOM=1 pytest tests/capture/test_eventstream_botocore.py
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
botocore_eventstream = pytest.importorskip("botocore.eventstream")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from stream_doctor.capture import http_frames as exchange  # noqa: E402
from stream_doctor.capture.eventstream import HeaderError, decode_headers, read_eventstream  # noqa: E402
from tests.conftest import CORPUS, NO_CORPUS, corpus_files, fixture_files  # noqa: E402

#: hypothesis and the corpus: the event stream decoder against botocore's
pytestmark = [pytest.mark.slow]

EXAMPLES = int(os.environ.get("STREAM_DOCTOR_FUZZ_EXAMPLES", "150"))
DIFFERENTIAL = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("STREAM_DOCTOR_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Outcome:
    """What one decoder made of a byte string: its messages, and where and how it stopped reading."""

    messages: list[tuple[int, dict[str, Any], bytes]]  # (offset, headers, payload)
    refused_at: int | None  # the offset of the first message it refused or could not finish
    why: str  # "" when every byte was read into messages


def botocore_outcome(data: bytes, pieces: list[int] | None = None) -> Outcome:
    """botocore's ``EventStreamBuffer`` fed ``data`` cut at ``pieces`` (offsets), reading messages as they come."""
    buffer = botocore_eventstream.EventStreamBuffer()
    messages: list[tuple[int, dict[str, Any], bytes]] = []
    offset = 0
    cuts = sorted({c for c in pieces or [] if 0 < c < len(data)})
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        buffer.add_data(data[start:end])
        try:
            for message in buffer:
                messages.append((offset, message.headers, message.payload))
                offset += message.prelude.total_length
        except Exception as exc:  # botocore raises ParserError, struct.error, KeyError, UnicodeDecodeError
            return Outcome(messages, offset, type(exc).__name__)
    if offset < len(data):
        return Outcome(messages, offset, "waiting for more bytes")
    return Outcome(messages, None, "")


def ours_outcome(data: bytes) -> Outcome:
    """Our reader over the whole of ``data``: the messages it decoded, and its first problem's offset."""
    capture = read_eventstream(data, "c")
    refused = {p.pos.offset: p.kind for p in capture.problems if p.pos is not None}
    messages = []
    for frame in capture.frames:
        offset = frame.pos.offset
        if offset in refused or (frame.error or "").startswith("undecodable event stream headers"):
            refused.setdefault(offset, "headers")
            continue
        (_, headers_size) = struct.unpack_from(">II", data, offset)
        headers = decode_headers(data[offset + 12 : offset + 12 + headers_size])
        messages.append((offset, headers, frame.data))
    first = min(refused, default=None)
    if first is not None:
        messages = [m for m in messages if m[0] < first]
    return Outcome(messages, first, refused[first] if first is not None else "")


def same(ours: list[tuple[int, dict[str, Any], bytes]], theirs: list[tuple[int, dict[str, Any], bytes]]) -> bool:
    """The same messages: offsets, payloads, header names and values (a UUID: our hex of botocore's 16 bytes)."""
    return len(ours) == len(theirs) and all(
        o[0] == t[0]
        and o[2] == t[2]
        and o[1].keys() == t[1].keys()
        and all(_same_value(o[1][k], t[1][k]) for k in o[1])
        for o, t in zip(ours, theirs, strict=True)
    )


def _same_value(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, str) and isinstance(theirs, bytes) and len(theirs) == 16:
        return ours == theirs.hex()
    return type(ours) is type(theirs) and ours == theirs


def documented(data: bytes, boto: Outcome) -> str | None:
    """The documented difference (module docstring) that explains botocore accepting a message ours refuses."""
    at = boto.refused_at if boto.refused_at is not None else len(data)
    ours = ours_outcome(data)
    if ours.refused_at is None or ours.refused_at >= at:
        return None
    start = ours.refused_at
    if len(data) - start < 12:
        return None
    total, headers_size, _ = struct.unpack_from(">III", data, start)
    if total < 16 + headers_size:
        return "total length smaller than its prelude, headers and CRC"
    try:
        decode_headers(data[start + 12 : start + 12 + headers_size])
    except HeaderError as exc:
        if "past the end" in str(exc) or "no value length" in str(exc):
            return "a header longer than the headers block"
    return None


def compare(data: bytes, pieces: list[int] | None = None) -> str | None:
    """None when both decoders agree on ``data``; else what differs (or the documented difference it is)."""
    boto = botocore_outcome(data, pieces)
    ours = ours_outcome(data)
    if ours.refused_at == boto.refused_at and same(ours.messages, boto.messages):
        return None
    reason = documented(data, boto)
    if reason is not None:
        return f"documented: {reason}"
    return f"botocore {boto}\nours {ours}"


# --- the inputs ---------------------------------------------------------------------------------------------


def fixture_streams() -> list[Path]:
    return fixture_files(suffixes=(".eventstream",), check_tree=True)


def corpus_bodies() -> list[tuple[str, bytes]]:
    """Every event stream body in the corpus, as the project's own readers decode its container."""
    if not CORPUS.is_dir():
        return []
    from stream_doctor.capture import READERS, sniff_scores

    bodies: list[tuple[str, bytes]] = []
    original = exchange.read_body

    def keep(body: bytes, content_type: str | None) -> Any:
        inner = original(body, content_type)
        if inner is not None and inner.container == "eventstream":
            bodies.append((path.name, body))
        return inner

    exchange.read_body = keep
    try:
        for path in corpus_files(suffixes=(".yaml", ".yml", ".har", ".json")):
            data = path.read_bytes()
            scores = sniff_scores(data[:65536], READERS)
            best = max(scores, key=lambda n: scores[n])
            if best in ("vcr", "har") and scores[best] > 0:
                try:
                    READERS[best].read(data, str(path))
                except Exception:  # noqa: BLE001  (a file this reader refuses is another test's business)
                    continue
    finally:
        exchange.read_body = original
    return bodies


# --- generated messages ------------------------------------------------------------------------------------

_NAMES = st.text(min_size=1, max_size=12).filter(lambda s: len(s.encode()) <= 255)


@st.composite
def header(draw: st.DrawFn) -> tuple[str, bytes, Any]:
    """One header of any value type: its name, its encoded bytes and the value botocore gives it."""
    kind = draw(st.integers(0, 9))
    name = draw(_NAMES)
    value: Any
    if kind in (0, 1):
        raw, value = b"", kind == 0
    elif kind in (2, 3, 4, 5, 8):
        width = {2: 1, 3: 2, 4: 4, 5: 8, 8: 8}[kind]
        value = draw(st.integers(-(1 << (8 * width - 1)), (1 << (8 * width - 1)) - 1))
        raw = value.to_bytes(width, "big", signed=True)
    elif kind == 6:
        value = draw(st.binary(max_size=300))
        raw = struct.pack(">H", len(value)) + value
    elif kind == 7:
        value = draw(st.text(max_size=100))
        raw = struct.pack(">H", len(value.encode())) + value.encode()
    else:
        value = draw(st.binary(min_size=16, max_size=16))
        raw = value
    encoded_name = name.encode()
    return name, bytes([len(encoded_name)]) + encoded_name + bytes([kind]) + raw, value


def encode(block: bytes, payload: bytes) -> bytes:
    total = 12 + len(block) + len(payload) + 4
    prelude = struct.pack(">II", total, len(block))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + block + payload
    return body + struct.pack(">I", zlib.crc32(body))


@st.composite
def message(draw: st.DrawFn) -> bytes:
    headers = draw(st.lists(header(), max_size=6, unique_by=lambda h: h[0]))
    payload = draw(
        st.one_of(
            st.binary(max_size=64),
            st.builds(lambda n, b: b * n, st.integers(0, 70_000), st.binary(min_size=1, max_size=3)),
        )
    )
    return encode(b"".join(raw for _, raw, _ in headers), payload)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A stream of messages with zero or more mutations: cut, flipped, lengths rewritten, garbage, duplicates."""
    data = bytearray(b"".join(draw(st.lists(message(), min_size=1, max_size=4))))
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["cut", "flip", "lengths", "lengths-crc", "garbage", "duplicate", "header-run"]))
        if kind == "cut":
            del data[draw(st.integers(0, len(data))) :]
        elif kind == "flip" and data:
            at = draw(st.integers(0, len(data) - 1))
            data[at] ^= draw(st.integers(1, 255))
        elif kind in ("lengths", "lengths-crc") and len(data) >= 12:
            field = draw(st.sampled_from([0, 4]))
            value = draw(st.one_of(st.integers(0, 64), st.integers(0, 0xFFFFFFFF)))
            data[field : field + 4] = struct.pack(">I", value)
            if kind == "lengths-crc":
                data[8:12] = struct.pack(">I", zlib.crc32(bytes(data[:8])))
        elif kind == "garbage":
            at = draw(st.integers(0, len(data)))
            data[at:at] = draw(st.binary(min_size=1, max_size=40))
        elif kind == "duplicate":
            data += bytes(data)
        elif kind == "header-run":
            data = bytearray(_header_block_mutation(draw, bytes(data)))
    return bytes(data)


def _header_block_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """A first message whose headers block is any bytes (bad types, lengths past the block, duplicates,
    invalid UTF-8), with both CRCs right so that only the headers are wrong."""
    if len(data) < 12:
        return data
    total, headers_size, _ = struct.unpack_from(">III", data)
    if total > len(data) or headers_size > total:
        return data
    block = draw(st.one_of(st.binary(max_size=40), st.just(data[12 : 12 + headers_size] * 2)))
    payload = data[12 + headers_size : total - 4]
    return encode(block, payload) + data[total:]


# --- the tests ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", fixture_streams(), ids=lambda p: p.name)
def test_every_fixture_decodes_as_botocore_decodes_it(path: Path) -> None:
    data = path.read_bytes()
    assert compare(data) is None
    for pieces in ([1], [12], list(range(0, len(data), 7)), [len(data) // 2]):
        assert compare(data, pieces) is None


def test_every_corpus_body_decodes_as_botocore_decodes_it() -> None:
    bodies = corpus_bodies()
    if not bodies:
        pytest.skip(f"no event stream bodies in {CORPUS}" if CORPUS.is_dir() else NO_CORPUS)
    differences = {name: compare(body, list(range(0, len(body), 13))) for name, body in bodies}
    assert {name: d for name, d in differences.items() if d is not None} == {}


@DIFFERENTIAL
@given(st.lists(message(), min_size=1, max_size=4), st.lists(st.integers(0, 1 << 20), max_size=5))
def test_generated_messages_decode_as_botocore_decodes_them(messages: list[bytes], pieces: list[int]) -> None:
    assert compare(b"".join(messages), pieces) is None


@DIFFERENTIAL
@given(mutated(), st.lists(st.integers(0, 1 << 20), max_size=3))
def test_mutated_streams_are_refused_where_botocore_refuses_them(data: bytes, pieces: list[int]) -> None:
    difference = compare(data, pieces)
    assert difference is None or difference.startswith("documented: ")
