"""The recording reverse proxy behind ``stream-doctor record``: any client, any language.

Point a client's base URL at it; every request is forwarded to the upstream unchanged (method,
path, query, headers, body bytes), and every response streamed back chunk by chunk as it arrives,
bytes untouched (compressed bodies stay compressed). Each chunk goes to the client first and is
recorded after, into one envelope per exchange in the output folder, with credentials removed
from what is written (``authorization``, ``x-api-key``, ``api-key``, ``?key=`` and the like, and
any header named with ``--redact``). Memory per exchange is the chunk in flight plus at most one
unfinished event, whatever the length of the response.

Built on aiohttp (the ``record`` extra): its server streams a response as it is written, and its
client hands over body chunks as they arrive without decoding them.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import sys
import time
from datetime import UTC, datetime
from typing import Any, Callable

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web

from stream_doctor.capture.exchange import redact_url
from stream_doctor.record.exchange import RecordedExchange, stream_end
from stream_doctor.record.writer import EnvelopeWriter, provider_of, redact_headers, request_record
from stream_doctor.records import dataclass, field

#: Hop-by-hop headers (RFC 9110 §7.6.1), and those the proxy's own HTTP stack sets for its connection.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
    }
)


@dataclass
class ProxyConfig:
    upstream: str  # base URL: the request's path and query are appended to it
    out: str  # folder for the envelopes
    redact: frozenset[str] = frozenset()  # more header names to keep out of the envelopes (lower-case)
    log: Callable[[str], None] | None = None  # one line per exchange (the CLI prints them on stderr)
    counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))


_SESSION = web.AppKey("session", ClientSession)


def build_app(config: ProxyConfig) -> web.Application:
    app = web.Application(client_max_size=1024**3)
    base = config.upstream.rstrip("/")

    async def start(app: web.Application) -> None:
        # No total timeout: a stream may run for many minutes. No decompression: bytes pass as they are.
        app[_SESSION] = ClientSession(
            connector=TCPConnector(limit=0),
            timeout=ClientTimeout(total=None, sock_connect=30),
            auto_decompress=False,
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
        )

    async def stop(app: web.Application) -> None:
        await app[_SESSION].close()

    async def handle(request: web.Request) -> web.StreamResponse:
        return await _exchange(request, request.app[_SESSION], base, config)

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


async def _exchange(request: web.Request, session: ClientSession, base: str, config: ProxyConfig) -> web.StreamResponse:
    body = await request.read()
    start = time.monotonic()
    target = base + request.path_qs
    sent = [(name, value) for name, value in request.headers.items() if name.lower() not in _HOP]
    writer = EnvelopeWriter(_open(config, request), start)
    provider = provider_of(request.path)
    writer.header(provider, f"stream-doctor record (proxy to {redact_url(base)})")
    record = request_record(0.0, request.method, target, body, list(request.headers.items()), config.redact)
    try:
        upstream = await session.request(
            request.method, target, headers=sent, data=body or None, allow_redirects=False, compress=None
        )
    except (TimeoutError, ClientError, OSError) as error:
        record["response"] = {"status": None, "error": f"the upstream could not be reached: {error}"}
        writer.write(record)
        writer.close()
        _log(config, f"{request.method} {request.path} → upstream unreachable ({error}) → {writer.file.name}")
        return web.Response(status=502, text=f"stream-doctor record: the upstream could not be reached: {error}\n")
    response_headers = list(upstream.headers.items())
    record["response"] = {"status": upstream.status, "headers": redact_headers(response_headers, config.redact)}
    writer.write(record)
    exchange = RecordedExchange(
        writer, upstream.headers.get("Content-Type"), upstream.headers.get("Content-Encoding"), stream_end(provider)
    )
    response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
    for name, value in response_headers:
        if name.lower() not in _HOP:
            response.headers.add(name, value)
    outcome = "complete"
    try:
        await response.prepare(request)
        async for chunk in upstream.content.iter_any():
            try:
                await response.write(chunk)  # the client first …
            except ConnectionError:
                exchange.chunk(chunk)  # the upstream sent it: it belongs to the record
                exchange.end("the client disconnected mid-stream; the proxy closed the upstream connection")
                outcome = (
                    "complete (the client disconnected after the last event)"
                    if exchange.finished
                    else "client disconnected"
                )
                return response
            exchange.chunk(chunk)  # … then the record
        exchange.end()
        try:
            await response.write_eof()
        except ConnectionError:
            outcome = "client disconnected at the end"
    except (TimeoutError, ClientError, OSError) as error:
        exchange.end(f"the upstream connection failed: {type(error).__name__}: {error}")
        outcome = (
            "complete (the upstream connection failed after the last event)"
            if exchange.finished
            else "upstream failed mid-stream"
        )
        if request.transport is not None:
            request.transport.abort()  # the client sees the stream cut too, as it was
    finally:
        upstream.close()
        writer.close()
        _log(
            config,
            f"{request.method} {request.path} {upstream.status} {outcome}, {exchange.events} events, "
            f"{exchange.size} bytes → {writer.file.name}",
        )
    return response


def _open(config: ProxyConfig, request: web.Request) -> Any:
    """A new envelope file: ``0001-20261123T143000Z-v1-messages.jsonl`` (never overwrites one)."""
    os.makedirs(config.out, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", request.path).strip("-")[:60] or "root"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    while True:
        path = os.path.join(config.out, f"{next(config.counter):04d}-{stamp}-{slug}.jsonl")
        try:
            return open(path, "xb")  # noqa: SIM115 - closed by the writer
        except FileExistsError:
            continue


def _log(config: ProxyConfig, line: str) -> None:
    if config.log is not None:
        config.log(line)


async def serve(config: ProxyConfig, host: str, port: int, ready: Callable[[int], None] | None = None) -> None:
    """Run the proxy until cancelled; ``ready`` gets the port it listens on (useful with port 0)."""
    runner = web.AppRunner(build_app(config), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None)
        bound = sockets[0].getsockname()[1] if sockets else port
        if ready is not None:
            ready(bound)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def run(config: ProxyConfig, host: str, port: int) -> None:
    """The CLI's entry: serve until Ctrl-C."""

    def ready(bound: int) -> None:
        print(
            f"stream-doctor record: listening on http://{host}:{bound}, forwarding to {redact_url(config.upstream)}, "
            f"envelopes in {config.out} (Ctrl-C to stop)",
            file=sys.stderr,
            flush=True,
        )

    try:
        asyncio.run(serve(config, host, port, ready))
    except KeyboardInterrupt:
        pass
