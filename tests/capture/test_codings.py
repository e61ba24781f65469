"""Content codings of HAR and cassette bodies: every coding a recorder may leave (gzip, deflate zlib and raw,
br, zstd, stacked) decoded under the capture's one budget, or a body-undecodable problem naming the coding."""

from __future__ import annotations

import base64
import gzip
import json
import sys
import zlib
from pathlib import Path
from typing import Callable

import brotli
import pytest
import yaml
import zstandard

from stream_doctor.capture import load
from stream_doctor.capture.base import Capture
from stream_doctor.capture.codings import Overflow, codings, undo
from stream_doctor.capture.http_frames import MAX_REQUEST_BODY, decode_content, request_body, request_marker
from stream_doctor.capture.limits import Budget, LimitExceeded, Limits

SSE = (
    b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)
URL = "https://api.openai.com/v1/chat/completions"


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


#: Content-Encoding value -> how the body was encoded (the codings applied left to right).
ENCODED: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
    "gzip, gzip": lambda data: gzip.compress(gzip.compress(data)),
    "gzip, br": lambda data: brotli.compress(gzip.compress(data)),
    "deflate, zstd": lambda data: zstandard.ZstdCompressor().compress(zlib.compress(data)),
}


def har_file(tmp_path: Path, body: bytes, encoding: str | None, base64_text: bool = True) -> Path:
    headers = [{"name": "Content-Encoding", "value": encoding}] if encoding else []
    text = base64.b64encode(body).decode() if base64_text else body.decode()
    content = {"mimeType": "text/event-stream", "text": text, **({"encoding": "base64"} if base64_text else {})}
    entry = {
        "request": {"method": "POST", "url": URL, "headers": [], "postData": {"text": '{"messages": []}'}},
        "response": {"status": 200, "headers": headers, "content": content},
    }
    path = tmp_path / "session.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    return path


def cassette(tmp_path: Path, body: bytes, encoding: str | None) -> Path:
    headers = {"Content-Type": ["text/event-stream"], **({"Content-Encoding": [encoding]} if encoding else {})}
    interaction = {
        "request": {"method": "POST", "uri": URL, "body": '{"messages": []}', "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": headers, "body": {"string": body}},
    }
    path = tmp_path / "cassette.yaml"
    path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}))
    return path


def stream_of(capture: Capture) -> list[bytes]:
    assert [(p.kind, p.message) for p in capture.problems] == []
    return [frame.data for frame in capture.frames if frame.kind != "request"]


EXPECTED = [b'{"choices":[{"index":0,"delta":{"content":"hi"}}]}', b"[DONE]"]


@pytest.mark.parametrize("encoding", list(ENCODED))
def test_a_har_body_still_encoded_is_decoded_by_its_content_encoding(tmp_path: Path, encoding: str) -> None:
    frames = stream_of(load(str(har_file(tmp_path, ENCODED[encoding](SSE), encoding))))
    assert frames[0] == EXPECTED[0] and frames[-1] == EXPECTED[1]


@pytest.mark.parametrize("encoding", list(ENCODED))
def test_a_cassette_binary_body_is_decoded_by_its_content_encoding(tmp_path: Path, encoding: str) -> None:
    frames = stream_of(load(str(cassette(tmp_path, ENCODED[encoding](SSE), encoding))))
    assert frames[0] == EXPECTED[0] and frames[-1] == EXPECTED[1]


def test_raw_deflate_is_read_as_servers_send_it(tmp_path: Path) -> None:
    frames = stream_of(load(str(har_file(tmp_path, raw_deflate(SSE), "deflate"))))
    assert frames[0] == EXPECTED[0]


@pytest.mark.parametrize("encoding", ["br", "zstd", "deflate", "gzip, gzip"])
def test_a_body_stored_decoded_is_read_as_it_is_whatever_the_headers_say(tmp_path: Path, encoding: str) -> None:
    # browsers store HAR bodies decoded: the header is no reason to decode them again, nor a finding
    for text in (False, True):
        frames = stream_of(load(str(har_file(tmp_path, SSE, encoding, base64_text=text))))
        assert frames[0] == EXPECTED[0]


def test_a_missing_library_is_a_problem_naming_the_coding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "brotli", None)  # import brotli raises ImportError
    capture = load(str(har_file(tmp_path, brotli.compress(SSE), "br")))
    [problem] = capture.problems
    assert problem.kind == "body-undecodable"
    assert problem.message == "Content-Encoding br: the brotli package is not installed (pip install brotli)"
    monkeypatch.setitem(sys.modules, "zstandard", None)
    [problem] = load(str(cassette(tmp_path, ENCODED["zstd"](SSE), "zstd"))).problems
    assert problem.message.startswith("Content-Encoding zstd: the zstandard package is not installed")


@pytest.mark.parametrize(
    ("encoding", "body", "says"),
    [
        ("compress", b"\x1f\x9d\x90binary", "Content-Encoding compress: stream-doctor does not know this coding"),
        ("br", brotli.compress(SSE)[:-8], "Content-Encoding br: the body cannot be decompressed"),
        ("zstd", ENCODED["zstd"](SSE)[:-6], "Content-Encoding zstd: the body cannot be decompressed"),
        ("gzip, gzip", gzip.compress(b"\x1f\x8b\x08\x00damaged", mtime=0), "Content-Encoding gzip: the body cannot be"),
    ],
)
def test_a_body_that_cannot_be_decoded_is_a_problem_naming_the_coding(
    tmp_path: Path, encoding: str, body: bytes, says: str
) -> None:
    [problem] = load(str(cassette(tmp_path, body, encoding))).problems
    assert problem.kind == "body-undecodable"
    assert problem.message.startswith(says)


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_every_decoder_stops_at_its_room(coding: str) -> None:
    zeros = bytes(8 << 20)
    encoded = ENCODED[coding](zeros)
    assert undo(encoded, coding, len(zeros)) == zeros
    with pytest.raises(Overflow):
        undo(encoded, coding, (1 << 20) - 1)


def test_codings_are_listed_in_the_order_they_were_applied() -> None:
    assert codings("x-gzip, identity,BR") == ["gzip", "br"]
    assert codings(None) == codings("") == []


def test_every_expansion_of_a_capture_takes_from_one_budget() -> None:
    budget = Budget(Limits(max_bytes=3 << 20), used=0)
    one = gzip.compress(bytes(1 << 20))
    for _ in range(3):
        decode_content(one, "gzip", budget)
    with pytest.raises(LimitExceeded, match="larger than 3 MiB once decompressed"):
        decode_content(one, "gzip", budget)
    # the file's own bytes come first
    with pytest.raises(LimitExceeded):
        decode_content(one, None, Budget(Limits(max_bytes=3 << 20), used=(2 << 20) + 1))


def test_a_request_body_over_its_limit_is_a_marker_not_expanded_whole() -> None:
    big = json.dumps({"messages": [{"role": "user", "content": "a" * MAX_REQUEST_BODY}]}).encode()
    budget = Budget(Limits(max_bytes=1 << 30))
    assert request_body(gzip.compress(big), budget) == request_marker()
    assert budget.left == (1 << 30) - MAX_REQUEST_BODY - 1  # what was made before it stopped, not the whole
    small = json.dumps({"messages": []}).encode()
    assert request_body(gzip.compress(small), budget) == {"messages": []}
    assert request_body(zlib.compress(small), budget, "deflate") == {"messages": []}
