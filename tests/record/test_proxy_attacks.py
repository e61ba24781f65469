"""The recording proxy attacked as the issue tried it: each row of issue 23's table is a test.

Each runs ``stream-doctor record`` as a subprocess under an address-space limit (``RLIMIT_AS``), in
front of a loopback upstream, with small limits and an input many times larger than them: the
proxy must stay up, forward every byte, hold a peak memory that follows its limits and not the
input (``VmHWM``), and write an envelope marked partial whose log line says what was cut.
"""

from __future__ import annotations

import gzip
import hashlib
import socket
import time
import zlib
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

from stream_doctor import replay
from tests.planted_secrets import PROXY_BODIES, PROXY_HEADERS, PROXY_SECRETS
from tests.record.hostile_upstream import HostileUpstream, Received
from tests.record.proxy_process import BASELINE, MiB, Proxy

#: the recording proxy in a subprocess under an address-space limit, before loopback upstreams; big inputs
pytestmark = [pytest.mark.external, pytest.mark.slow]

pytest.importorskip("aiohttp")
httpx2 = pytest.importorskip("httpx2")


def envelope(out: Path) -> list[dict[str, Any]]:
    [path] = sorted(out.glob("*.jsonl"))
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def the_path(out: Path) -> Path:
    [path] = sorted(out.glob("*.jsonl"))
    return path


def partial(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["partial"] for r in records if "partial" in r]


def sse(headers: list[tuple[str, str]], chunks: Iterator[bytes]) -> Any:
    return lambda received: (headers, chunks)


def repeated(piece: bytes, total: int) -> Iterator[bytes]:
    block = piece * max(1, (256 * 1024) // len(piece))
    sent = 0
    while sent < total:
        yield block
        sent += len(block)


def size_of(chunks: list[bytes]) -> int:
    return sum(len(c) for c in chunks)


# -- the upstream ---------------------------------------------------------------------------------


def test_an_upstream_that_never_ends_its_event_is_forwarded_whole_and_recorded_cut(tmp_path: Path) -> None:
    total = 160 * MiB  # one event that never ends (the 2 GB, scaled down)
    body = [b'event: content_block_delta\ndata: {"x": "'] + list(repeated(b"x" * 1024, total))
    expected = size_of(body)
    out = tmp_path / "out"
    with (
        HostileUpstream(lambda r: ([("content-type", "text/event-stream")], iter(body))) as upstream,
        Proxy(upstream.url, out, "--max-event", "1MiB", "--max-capture", "1GiB") as proxy,
    ):
        received = 0
        with (
            httpx2.Client(timeout=60) as client,
            client.stream("POST", f"{proxy.url}/v1/messages", content=b"{}") as response,
        ):
            for chunk in response.iter_raw():
                received += len(chunk)
        [line] = proxy.wait_for_lines(1)
        peak = proxy.peak()
        assert proxy.alive()
    assert received == expected  # every byte forwarded
    assert peak < BASELINE + 8 * MiB, peak  # not the 160 MiB event
    records = envelope(out)
    [cut] = partial(records)
    assert cut["limit"] == "max-event" and MiB - 64 <= cut["kept_bytes"] <= MiB
    assert cut["kept_bytes"] + cut["dropped_bytes"] >= total
    assert the_path(out).stat().st_size < 2 * MiB
    assert "events cut to --max-event" in line and "upstream" not in line.split(" 200 ")[0]
    report = replay(str(the_path(out)))
    assert "SD003" in report.codes  # the replay says the capture was cut, and why
    assert any("--max-event" in f.message for f in report.findings if f.code == "SD003")


def test_an_event_just_under_the_limit_is_recorded_whole(tmp_path: Path) -> None:
    """The near miss: an event below ``--max-event`` is an ordinary event, nothing partial."""
    text = "y" * (900 * 1024)
    body = [b'event: ping\ndata: {"type": "ping", "pad": "' + text.encode() + b'"}\n\n']
    out = tmp_path / "out"
    with (
        HostileUpstream(lambda r: ([("content-type", "text/event-stream")], iter(body))) as upstream,
        Proxy(upstream.url, out, "--max-event", "1MiB") as proxy,
        httpx2.Client(timeout=60) as client,
    ):
        assert client.post(f"{proxy.url}/v1/messages", content=b"{}").content == body[0]
        [line] = proxy.wait_for_lines(1)
    records = envelope(out)
    assert partial(records) == [] and "partial" not in line
    assert records[-1]["data"]["pad"] == text


def _gzip_bomb(expanded: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    ping = b'event: ping\ndata: {"type": "ping"}\n\n' * 4096
    out = [compressor.compress(ping) for _ in range(expanded // len(ping))]
    return b"".join(out) + compressor.flush()


def test_a_gzip_response_that_expands_far_past_the_capture_limit(tmp_path: Path) -> None:
    bomb = _gzip_bomb(512 * MiB)  # a few hundred KB on the wire
    out = tmp_path / "out"
    headers = [("content-type", "text/event-stream"), ("content-encoding", "gzip")]
    with (
        HostileUpstream(
            lambda r: (headers, iter([bomb[i : i + 65536] for i in range(0, len(bomb), 65536)]))
        ) as upstream,
        Proxy(upstream.url, out, "--max-capture", "2MiB") as proxy,
        httpx2.Client(timeout=60) as client,
    ):
        with client.stream("POST", f"{proxy.url}/v1/messages", content=b"{}") as response:
            received = b"".join(response.iter_raw())
        [line] = proxy.wait_for_lines(1)
        peak = proxy.peak()
    assert received == bomb  # forwarded compressed, untouched
    assert peak < BASELINE + 16 * MiB, peak
    [cut] = partial(envelope(out))
    assert cut["limit"] == "max-capture" and cut["decoded_bytes"] <= 2 * MiB and cut["dropped_bytes"] > 0
    assert the_path(out).stat().st_size < 8 * MiB
    assert "complete, 0 events" not in line and "--max-capture 2097152 bytes reached" in line


def test_an_upstream_that_pings_for_ever_stops_being_recorded_at_the_capture_limit(tmp_path: Path) -> None:
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    out = tmp_path / "out"
    with (
        HostileUpstream(lambda r: ([("content-type", "text/event-stream")], repeated(ping, 64 * MiB))) as upstream,
        Proxy(upstream.url, out, "--max-capture", "1MiB") as proxy,
        httpx2.Client(timeout=60) as client,
    ):
        with client.stream("POST", f"{proxy.url}/v1/messages", content=b"{}") as response:
            received = sum(len(c) for c in response.iter_raw())
        [line] = proxy.wait_for_lines(1)
    assert received >= 64 * MiB
    size = the_path(out).stat().st_size
    assert size < 3 * MiB, size  # bounded by the limit, not by the 64 MiB of pings
    [cut] = partial(envelope(out))
    assert cut["limit"] == "max-capture" and cut["dropped_bytes"] > 60 * MiB
    assert "capture partial" in line


def test_a_stream_under_the_capture_limit_is_complete(tmp_path: Path) -> None:
    """The near miss: the same pings, fewer than the limit, and the stream's end: nothing partial."""
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    body = [ping * 1000, b'event: message_stop\ndata: {"type": "message_stop"}\n\n']
    out = tmp_path / "out"
    with (
        HostileUpstream(lambda r: ([("content-type", "text/event-stream")], iter(body))) as upstream,
        Proxy(upstream.url, out, "--max-capture", "1MiB") as proxy,
        httpx2.Client(timeout=60) as client,
    ):
        client.post(f"{proxy.url}/v1/messages", content=b"{}")
        [line] = proxy.wait_for_lines(1)
    assert partial(envelope(out)) == [] and " complete, 1001 events" in line


# -- the client -----------------------------------------------------------------------------------


def _echo(received: Received) -> tuple[list[tuple[str, str]], Iterator[bytes]]:
    return [("content-type", "application/json")], iter([b'{"ok": true}'])


def test_a_gzip_request_body_that_expands_past_the_limit_is_forwarded_as_sent(tmp_path: Path) -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    body = b"".join(compressor.compress(b'{"pad": "' + b"a" * (MiB - 10)) for _ in range(512)) + compressor.flush()
    out = tmp_path / "out"
    with (
        HostileUpstream(_echo) as upstream,
        Proxy(upstream.url, out, "--max-request-body", "1MiB") as proxy,
        httpx2.Client(timeout=60) as client,
    ):
        response = client.post(
            f"{proxy.url}/v1/messages",
            content=body,
            headers={"content-encoding": "gzip", "content-type": "application/json"},
        )
        [line] = proxy.wait_for_lines(1)
        peak = proxy.peak()
    assert response.status_code == 200
    [seen] = upstream.received
    assert seen.body_sha256 == hashlib.sha256(body).hexdigest()  # byte for byte, still gzip
    assert b"content-encoding: gzip" in seen.head.lower()
    assert peak < BASELINE + 8 * MiB, peak
    request = envelope(out)[1]
    assert request["partial"]["limit"] == "max-request-body" and len(request["raw_body"]) <= MiB
    assert "request recorded partial" in line and "decompresses past" in line


def test_a_huge_json_request_body_streams_through_in_bounded_memory(tmp_path: Path) -> None:
    total = 256 * MiB
    pieces = [b'{"messages": [' + b'{"role": "user", "content": "hello"},' * 10] + list(
        repeated(b'{"role": "user", "content": "' + b"z" * 200 + b'"},', total)
    )
    pieces.append(b'{"role": "user", "content": "end"}]}')
    digest = hashlib.sha256(b"".join(pieces)).hexdigest()
    out = tmp_path / "out"
    with (
        HostileUpstream(_echo) as upstream,
        Proxy(upstream.url, out, "--max-request-body", "2MiB") as proxy,
        httpx2.Client(timeout=120) as client,
    ):
        response = client.post(f"{proxy.url}/v1/messages", content=iter(pieces))
        [line] = proxy.wait_for_lines(1)
        peak = proxy.peak()
    assert response.status_code == 200 and response.content == b'{"ok": true}'
    [seen] = upstream.received
    assert seen.body_sha256 == digest and seen.body_size >= total
    assert peak < BASELINE + 16 * MiB, peak  # not 4x the 256 MiB body
    request = envelope(out)[1]
    assert request["partial"] == {"limit": "max-request-body", "kept_bytes": 2 * MiB, "body_bytes": seen.body_size}
    assert "request recorded partial" in line


def test_a_gzip_request_under_the_limit_is_forwarded_compressed_and_recorded_decoded(tmp_path: Path) -> None:
    """The issue's 500 from the upstream: the body was forwarded decompressed but labelled gzip."""
    plain = orjson.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    body = gzip.compress(plain)
    out = tmp_path / "out"
    with (
        HostileUpstream(_echo) as upstream,
        Proxy(upstream.url, out) as proxy,
        httpx2.Client(timeout=60) as client,
    ):
        client.post(f"{proxy.url}/v1/messages", content=body, headers={"content-encoding": "gzip"})
        [line] = proxy.wait_for_lines(1)
    [seen] = upstream.received
    assert seen.body_start == body and gzip.decompress(seen.body_start) == plain
    request = envelope(out)[1]
    assert request["body"] == orjson.loads(plain) and "partial" not in request
    assert "partial" not in line


def test_slow_clients_that_never_finish_their_headers(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with (
        HostileUpstream(_echo) as upstream,
        Proxy(upstream.url, out, "--max-connections", "20", "--header-timeout", "1") as proxy,
    ):
        slow = []
        for _ in range(60):
            connection = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
            connection.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-slow: ")
            slow.append(connection)
        started = time.monotonic()
        answers = []
        for connection in slow:
            data = b""
            while chunk := connection.recv(65536):
                data += chunk
            answers.append(data)
            connection.close()
        waited = time.monotonic() - started
        assert waited < 5, waited  # closed by the header timeout, not held for a minute
        refused = [a for a in answers if a.startswith(b"HTTP/1.1 503")]
        assert len(refused) >= 40 and all(b"--max-connections" in a for a in refused)
        with httpx2.Client(timeout=10) as client:  # and the proxy still serves
            assert client.post(f"{proxy.url}/v1/messages", content=b"{}").status_code == 200
        assert any("refused a connection" in line for line in proxy.lines)


def test_a_client_under_the_header_timeout_is_served(tmp_path: Path) -> None:
    """The near miss: a head sent in two parts, well within the timeout."""
    out = tmp_path / "out"
    with HostileUpstream(_echo) as upstream, Proxy(upstream.url, out, "--header-timeout", "3") as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as connection:
            connection.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")
            time.sleep(0.5)
            connection.sendall(b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
            data = b""
            while chunk := connection.recv(65536):
                data += chunk
    assert data.startswith(b"HTTP/1.1 200") and b'{"ok": true}' in data


def test_credentials_in_any_header_and_any_body_shape_never_reach_the_envelope(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with (
        HostileUpstream(_echo) as upstream,
        Proxy(upstream.url, out) as proxy,
        httpx2.Client(timeout=10) as client,
    ):
        for content_type, body in PROXY_BODIES:
            client.post(
                f"{proxy.url}/v1/messages", content=body, headers=[("content-type", content_type), *PROXY_HEADERS]
            )
        proxy.wait_for_lines(len(PROXY_BODIES))
    forwarded = b"".join(r.head + r.body_start for r in upstream.received)
    assert all(secret.encode() in forwarded for secret in PROXY_SECRETS)  # the upstream got each one
    written = b"".join(path.read_bytes() for path in sorted(out.glob("*.jsonl")))
    leaked = [secret for secret in PROXY_SECRETS if secret.encode() in written]
    assert leaked == []
    assert written.count(b"max_tokens") == len(PROXY_BODIES)  # the rest of each body is still there


def _stalling(pause: float) -> Iterator[bytes]:
    yield b'event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_1"}}\n\n'
    time.sleep(pause)
    yield b'event: message_stop\ndata: {"type": "message_stop"}\n\n'


@pytest.mark.parametrize(("pause", "cut"), [(3.0, True), (0.3, False)])
def test_an_upstream_that_goes_silent_is_cut_at_the_idle_timeout(tmp_path: Path, pause: float, cut: bool) -> None:
    out = tmp_path / "out"
    with (
        HostileUpstream(lambda r: ([("content-type", "text/event-stream")], _stalling(pause))) as upstream,
        Proxy(upstream.url, out, "--idle-timeout", "1") as proxy,
        httpx2.Client(timeout=10) as client,
    ):
        try:
            with client.stream("POST", f"{proxy.url}/v1/messages", content=b"{}") as response:
                for _ in response.iter_raw():
                    pass
        except httpx2.HTTPError:
            assert cut  # the client sees the stream cut, as it was
        [line] = proxy.wait_for_lines(1)
    records = envelope(out)
    if cut:
        assert "upstream stalled mid-stream" in line
        assert "the upstream sent nothing for 1 s (--idle-timeout)" in records[-1]["error"]
        assert "SD003" in replay(str(the_path(out))).codes
    else:
        assert " complete, 2 events" in line and records[-1]["data"]["type"] == "message_stop"


@pytest.mark.parametrize(
    ("limit", "total"), [(1, 96), (1, 288), (16, 96)], ids=["1MiB-of-96MiB", "1MiB-of-288MiB", "16MiB-of-96MiB"]
)
def test_the_memory_an_unended_event_takes_follows_the_limit_not_the_input(
    tmp_path: Path, limit: int, total: int
) -> None:
    """Tripling the input leaves the peak where it was; raising ``--max-event`` raises it (about three
    copies of the kept event at its write: bytes, text, JSON line)."""
    body = [b'event: x\ndata: {"x": "'] + list(repeated(b"x" * 1024, total * MiB))
    with (
        HostileUpstream(lambda r: ([("content-type", "text/event-stream")], iter(body))) as upstream,
        Proxy(upstream.url, tmp_path, "--max-event", f"{limit}MiB", "--max-capture", "1GiB") as proxy,
    ):
        start = proxy.peak()
        with httpx2.Client(timeout=60) as client, client.stream("POST", f"{proxy.url}/v1/messages") as response:
            received = sum(len(chunk) for chunk in response.iter_raw())
        proxy.wait_for_lines(1)
        grown = proxy.peak() - start
    assert received >= total * MiB
    assert grown < 4 * limit * MiB + 8 * MiB, grown
