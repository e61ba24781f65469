"""A compressed request body (``Content-Encoding``: gzip, deflate, br, zstd, stacked) is undone with the
codings the capture readers know, under ``--max-request``: it is answered and recorded as the body it
decodes to. One that decompresses past the limit (a decompression bomb) is the provider's 413, one that
cannot be undone (cut short, an unknown coding) its 400, each saying why; a body that decodes to just
under the limit is served."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any, Callable

import orjson
import pytest

pytest.importorskip("aiohttp")
httpx = pytest.importorskip("httpx")
brotli = pytest.importorskip("brotli")
zstandard = pytest.importorskip("zstandard")

from stream_doctor.serve.load import load_script  # noqa: E402
from tests.conftest import plain_http_tls  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EMPTY_INPUT = str(FIXTURES / "anthropic/empty_input_bug.jsonl")
TIMEOUT = 20.0
LIMIT = 64 * 1024


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-15)
    return compressor.compress(data) + compressor.flush()


CODINGS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
    "gzip, br": lambda data: brotli.compress(gzip.compress(data)),  # applied in the order listed
}


def first_body() -> dict[str, Any]:
    request = load_script(EMPTY_INPUT).turns[0].request
    assert request is not None
    return dict(request["body"])


def post(server: Any, data: bytes, encoding: str) -> httpx.Response:
    headers = {"content-type": "application/json", "content-encoding": encoding}
    return httpx.post(
        server.url + "/v1/messages", content=data, headers=headers, timeout=TIMEOUT, verify=plain_http_tls()
    )


@pytest.mark.parametrize("encoding", sorted(CODINGS))
def test_a_compressed_request_is_served_and_recorded_decoded(encoding: str, stream_doctor_server: Any) -> None:
    server = stream_doctor_server(EMPTY_INPUT)
    answered = post(server, CODINGS[encoding](orjson.dumps(first_body())), encoding)
    assert answered.status_code == 200 and b"message_stop" in answered.content
    (judged,) = server.stop()
    assert not judged.served.refused and [t.ending for t in judged.served.turns] == ["served"]
    requests = [orjson.loads(line) for line in Path(judged.served.envelope).read_bytes().splitlines()]
    (recorded,) = [r for r in requests if r.get("sd") == "request"]
    assert recorded["body"]["messages"] == first_body()["messages"]


def test_a_raw_deflate_body_is_undone_too(stream_doctor_server: Any) -> None:
    """RFC 9110's deflate is zlib-wrapped; some clients send it raw, and the capture readers take both."""
    server = stream_doctor_server(EMPTY_INPUT)
    assert post(server, _raw_deflate(orjson.dumps(first_body())), "deflate").status_code == 200


@pytest.mark.parametrize("encoding", ["gzip", "br", "zstd"])
def test_a_decompression_bomb_is_413_and_just_under_the_limit_is_served(
    encoding: str, stream_doctor_server: Any
) -> None:
    server = stream_doctor_server(EMPTY_INPUT, max_request=LIMIT)
    body = first_body()
    bomb = orjson.dumps({**body, "system": "x" * (256 * LIMIT)})  # 16 MiB of text, a few KiB compressed
    refused = post(server, CODINGS[encoding](bomb), encoding)
    assert refused.status_code == 413 and refused.json()["error"]["type"] == "request_too_large"
    assert f"decompresses past --max-request {LIMIT} bytes" in refused.json()["error"]["message"]
    padded = orjson.dumps({**body, "system": ""})
    under = orjson.dumps({**body, "system": "x" * (LIMIT - len(padded))})  # exactly the limit, decoded
    assert len(under) == LIMIT
    served = post(server, CODINGS[encoding](under), encoding)
    assert served.status_code == 200 and b"message_stop" in served.content  # a system prompt: noted, served


@pytest.mark.parametrize(
    ("encoding", "data", "said"),
    [
        ("gzip", gzip.compress(b'{"model": "x"}', mtime=0)[:-12], "cut off before the end"),
        ("gzip", b'{"model": "not gzip at all"}', "cannot be decompressed"),
        ("compress", b'{"model": "x"}', "does not know this coding"),
    ],
)
def test_a_body_a_coding_cannot_undo_is_a_400_saying_why(
    encoding: str, data: bytes, said: str, stream_doctor_server: Any
) -> None:
    server = stream_doctor_server(EMPTY_INPUT)
    refused = post(server, data, encoding)
    assert refused.status_code == 400 and refused.json()["type"] == "error"
    message = refused.json()["error"]["message"]
    assert f"Content-Encoding {encoding} cannot be undone" in message and said in message
    assert server.stop() == []  # refused before any conversation: nothing recorded, nothing judged


def test_identity_is_no_coding(stream_doctor_server: Any) -> None:
    server = stream_doctor_server(EMPTY_INPUT)
    assert post(server, orjson.dumps(first_body()), "identity").status_code == 200
