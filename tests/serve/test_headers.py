"""The recorded response headers a client reads are served again: the request id the real SDKs hand the
application (anthropic's ``request_id``, openai's ``request_id``), rate-limit and retry advice, OpenAI's
processing time. Never served: hop-by-hop headers, a credential or cookie (masked by the reader), a
``Content-Length`` that does not count the bytes sent (a gzip body the server codes again)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import planted_secrets
from tests.conftest import plain_http_tls

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
pytest.importorskip("aiohttp")
httpx = pytest.importorskip("httpx")

from stream_doctor.serve.load import load_script  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ANTHROPIC = str(FIXTURES / "conversations/anthropic_result_missing.yaml")
OPENAI_GZIP = str(FIXTURES / "conversations/openai_gzip_two_turns.yaml")
TIMEOUT = 20.0


def first_body(capture: str) -> dict[str, Any]:
    request = load_script(capture).turns[0].request
    assert request is not None
    return {key: value for key, value in request["body"].items() if key != "stream"}


@pytest.mark.stream_doctor_serve(ANTHROPIC)
def test_the_anthropic_sdk_hands_the_application_the_recorded_request_id(stream_doctor_server: Any) -> None:
    client = anthropic.Anthropic(base_url=stream_doctor_server.url, api_key="test", max_retries=0, timeout=TIMEOUT)
    with client.messages.stream(**first_body(ANTHROPIC)) as stream:
        stream.get_final_message()
        headers = stream.response.headers
    assert stream.request_id == "req_011CUqK7pR9sYbWnT4vXzD2f"
    assert headers["cache-control"] == "no-cache"
    assert "anthropic-organization-id" not in headers  # a credential-named header: masked when read, never served


@pytest.mark.stream_doctor_serve(OPENAI_GZIP)
def test_the_openai_sdk_reads_the_request_id_and_processing_time_of_a_gzip_body(stream_doctor_server: Any) -> None:
    client = openai.OpenAI(base_url=stream_doctor_server.url + "/v1", api_key="test", max_retries=0, timeout=TIMEOUT)
    raw = client.chat.completions.with_raw_response.create(**first_body(OPENAI_GZIP), stream=True)
    chunks = list(raw.parse())
    assert chunks and raw.request_id == "req_7c1f0b2e9d8a4f6e8b3a1c5d7e9f0a2b"
    assert raw.headers["openai-processing-ms"] == "412" and raw.headers["content-encoding"] == "gzip"
    assert "openai-organization" not in raw.headers
    assert "content-length" not in raw.headers  # the server gzips the body again: the recorded length is not its


def _cassette(tmp_path: Path, headers: dict[str, str]) -> str:
    """The planted Anthropic cassette with one turn answered with ``headers`` (its secrets are not the point here)."""
    cassette = planted_secrets.anthropic_cassette()
    interaction = cassette["interactions"][0]
    interaction["response"]["headers"] = {name: [value] for name, value in headers.items()}
    cassette["interactions"] = [interaction]
    path = tmp_path / "headers.yaml"
    path.write_text(json.dumps(cassette), encoding="utf-8")  # JSON is YAML
    return str(path)


def _served_headers(server: Any, capture: str) -> httpx.Headers:
    request = load_script(capture).turns[0].request
    assert request is not None
    answered = httpx.post(server.url + "/v1/messages", json=request["body"], timeout=TIMEOUT, verify=plain_http_tls())
    assert answered.status_code == 200
    return answered.headers


def test_rate_limit_and_retry_headers_are_served_hop_by_hop_and_cookies_never(
    stream_doctor_server: Any, tmp_path: Path
) -> None:
    body = planted_secrets.anthropic_cassette()["interactions"][0]["response"]["body"]["string"]
    capture = _cassette(
        tmp_path,
        {
            "content-type": "text/event-stream",
            "content-length": str(len(body.encode())),
            "anthropic-ratelimit-requests-remaining": "49",
            "retry-after": "7",
            "x-should-retry": "false",
            "set-cookie": "session=abc123; HttpOnly",
            "connection": "close",
            "keep-alive": "timeout=5",
            "transfer-encoding": "chunked",
        },
    )
    headers = _served_headers(stream_doctor_server(capture), capture)
    assert headers["anthropic-ratelimit-requests-remaining"] == "49"
    assert (headers["retry-after"], headers["x-should-retry"]) == ("7", "false")
    assert headers["content-length"] == str(len(body.encode()))  # it counts the very bytes served
    assert "set-cookie" not in headers and "keep-alive" not in headers
    assert headers.get("connection") != "close" and headers.get("transfer-encoding") != "chunked"


def test_a_content_length_that_does_not_count_the_body_is_not_served(stream_doctor_server: Any, tmp_path: Path) -> None:
    capture = _cassette(tmp_path, {"content-type": "text/event-stream", "content-length": "12", "request-id": "req_x"})
    headers = _served_headers(stream_doctor_server(capture), capture)
    assert headers["request-id"] == "req_x"
    assert headers.get("content-length") != "12" and headers.get("transfer-encoding") == "chunked"


def test_an_envelope_recorded_by_stream_doctor_record_serves_the_headers_it_kept(
    stream_doctor_server: Any, tmp_path: Path
) -> None:
    """``record`` writes the response's headers beside the request (credentials already ``[redacted]``)."""
    request, _ = planted_secrets.anthropic_requests()
    response = {"status": 200, "headers": {"request-id": "req_envelope", "set-cookie": "[redacted]", "date": "x"}}
    records = [
        {"sd": "header", "version": 1, "provider": "anthropic"},
        {
            "sd": "request",
            "method": "POST",
            "url": "http://127.0.0.1/v1/messages",
            "body": request,
            "response": response,
        },
        *({"sd": "event", "event": e["type"], "data": e} for e in planted_secrets.anthropic_first_events()),
    ]
    capture = tmp_path / "recorded.jsonl"
    capture.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    headers = _served_headers(stream_doctor_server(str(capture)), str(capture))
    assert headers["request-id"] == "req_envelope"
    assert "set-cookie" not in headers and headers.get("date") != "x"  # masked, and the server's own date
