"""The recording reverse proxy behind ``stream-doctor record``: any client, any language.

Point a client's base URL at it; every request is forwarded to the upstream byte for byte (method,
path, query, headers, body: a gzip request stays gzip), and every response streamed back chunk by
chunk as it arrives, bytes untouched (compressed bodies stay compressed). Each chunk goes to the
client first and is recorded after, into one envelope per conversation in the output folder
(``conversations.py``: a request that sends back the previous response's assistant turn continues
its conversation's envelope), with credentials removed from what is written (``util/credentials.py``:
headers whose name or value looks like one, credential fields of any body shape, ``?key=`` and the
like, and any header named with ``--redact``). ``config.listen`` watches each conversation's records
as they are written (the CLI's live findings, ``stream_doctor.record.live``).

Nothing a client or an upstream sends can make it hold more than its limits (``ProxyConfig``, each
a ``stream-doctor record`` option): the request body is forwarded as it arrives and only its first
``max_request_body`` bytes are kept for the record (decompressed under the same cap); a response
is decoded and recorded up to ``max_capture`` bytes and one event up to ``max_event``; at most
``max_connections`` connections are served (the next get a 503); a connection must send its
request head within ``header_timeout`` seconds, and a transfer that stalls for ``idle_timeout``
seconds is cut. Every exchange that hits a limit or breaks is written as a capture marked partial
(a ``partial`` field saying which limit, what was kept and what dropped, and the problem that
makes the replay report it), and its log line says so.

Built on aiohttp (the ``record`` extra): its server streams a response as it is written, and its
client hands over body chunks as they arrive without decoding them.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import sys
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web

from stream_doctor.capture.http_frames import redact_url
from stream_doctor.record.conversations import Conversation, Conversations, ListenerFactory
from stream_doctor.record.exchange import RecordedExchange, stream_end
from stream_doctor.record.parse import MAX_DECODED, MAX_EVENT
from stream_doctor.record.writer import HOP_BY_HOP, provider_of, redact_headers, request_record

MiB = 1024 * 1024


@dataclass
class ProxyConfig:
    upstream: str  # base URL: the request's path and query are appended to it
    out: str  # folder for the envelopes
    redact: frozenset[str] = frozenset()  # more header names to keep out of the envelopes (lower-case)
    log: Callable[[str], None] | None = None  # one line per exchange (the CLI prints them on stderr)
    counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    max_request_body: int = 16 * MiB  # of a request body, kept (decoded) for the record; all of it is forwarded
    max_event: int = MAX_EVENT  # of one response event (or a body that is not a stream), kept
    max_capture: int = MAX_DECODED  # of a response, decoded and recorded; the rest is forwarded only
    max_connections: int = 256  # open at once; the next ones are answered 503 and closed
    header_timeout: float = 10.0  # to send a request head (and idle time between keep-alive requests)
    idle_timeout: float = 600.0  # without a byte moving, either way, before an exchange is cut
    listen: ListenerFactory | None = None  # watches each conversation as it is written (``stream_doctor.record.live``)


#: Seconds the exchanges still running when the proxy is stopped get to end (then each is recorded cut).
_SHUTDOWN = 2.0

_SESSION = web.AppKey("session", ClientSession)
_CONVERSATIONS = web.AppKey("conversations", Conversations)


def build_app(config: ProxyConfig) -> web.Application:
    app = web.Application()
    base = config.upstream.rstrip("/")

    async def start(app: web.Application) -> None:
        # No total timeout: a stream may run for many minutes; but an upstream silent for
        # ``idle_timeout`` (sock_read) is cut. No decompression: bytes pass as they are.
        app[_SESSION] = ClientSession(
            connector=TCPConnector(limit=0),
            timeout=ClientTimeout(total=None, sock_connect=30, sock_read=config.idle_timeout),
            auto_decompress=False,
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
        )

    async def stop(app: web.Application) -> None:
        await app[_SESSION].close()
        app[_CONVERSATIONS].close()

    async def handle(request: web.Request) -> web.StreamResponse:
        return await _exchange(request, request.app[_SESSION], request.app[_CONVERSATIONS], base, config)

    app[_CONVERSATIONS] = Conversations(
        config.out,
        f"stream-doctor record (proxy to {redact_url(base)})",
        config.listen,
        config.counter,
        (lambda line: _log(config, line)) if config.log is not None else None,
    )

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


class BodyCopy:
    """What the record keeps of a request body as it is forwarded: its first ``limit`` bytes, and a count of all."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.size = 0
        self.whole = False  # the client sent the body to its end
        self.failure: str | None = None

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]

    def recorded(self, encoding: str | None) -> tuple[bytes, str | None]:
        """The body to record (decoded, under the limit) and, when it is not the whole body, why."""
        data = bytes(self.kept)
        why = None
        if self.size > self.limit:
            why = f"the request body ({self.size} bytes) passed the recorder's --max-request-body limit: its first {self.limit} bytes are kept"
        elif self.failure is not None:
            why = f"{self.failure}: {self.size} bytes of the request body arrived"
        elif not self.whole:
            why = f"the upstream answered before the request body was sent whole ({self.size} bytes)"
        coding = (encoding or "").strip().lower()
        if coding in ("gzip", "x-gzip", "deflate") and data:
            decoder = zlib.decompressobj(zlib.MAX_WBITS | 16 if coding != "deflate" else zlib.MAX_WBITS)
            try:
                decoded = decoder.decompress(data, self.limit)
            except zlib.error as error:
                return b"", f"the {coding} request body could not be decompressed ({error}); it was forwarded as sent"
            if decoder.unconsumed_tail:
                why = f"the {coding} request body decompresses past the recorder's --max-request-body limit: its first {self.limit} decoded bytes are kept"
            elif not decoder.eof and why is None:
                why = f"the {coding} request body ends before its compressed stream does"
            data = decoded
        return data, why


async def _forward(request: web.Request, copy: BodyCopy, idle: float) -> AsyncIterator[bytes]:
    """The request body as it arrives, chunk by chunk (never read whole), copied into ``copy``."""
    while True:
        try:
            async with asyncio.timeout(idle):
                chunk = await request.content.readany()
        except TimeoutError:
            copy.failure = f"the client sent no byte of its request body for {idle:g} s (--idle-timeout)"
            raise ConnectionResetError(copy.failure) from None
        if not chunk:
            copy.whole = True
            return
        copy.add(chunk)
        yield chunk


async def _rest_of_body(request: web.Request, copy: BodyCopy, idle: float) -> None:
    """The rest of a request body that was never forwarded (the upstream could not be reached), read for
    the record up to its limit; a client that stops sending leaves it as it is."""
    try:
        async for _ in _forward(request, copy, idle):
            if copy.size > copy.limit:
                return
    except (ConnectionError, RuntimeError):  # reset, or aiohttp's reader already ended by the failed send
        return


def _os_error(error: BaseException) -> str:
    """What the operating system said (``[Errno 111] Connection refused``), else the client's own words."""
    cause = getattr(error, "os_error", error)  # aiohttp's ClientConnectorError holds it
    if isinstance(cause, OSError) and cause.errno:
        return f"[Errno {cause.errno}] {os.strerror(cause.errno)}"  # asyncio's own words name no upstream
    return str(error) or type(error).__name__


class _Incoming:
    """One client request as the proxy forwards it: where it goes, and the copy of its body the record keeps."""

    def __init__(self, request: web.Request, conversations: Conversations, base: str, config: ProxyConfig) -> None:
        self.start = time.monotonic()
        self.request, self.conversations, self.base, self.config = request, conversations, base, config
        self.target = base + request.path_qs
        self.provider = provider_of(request.path)
        self.copy = BodyCopy(config.max_request_body)
        self.copy.whole = not request.body_exists

    async def send(self, session: ClientSession) -> Any:
        """The upstream's response (its head): the request forwarded with its body streamed as it arrives."""
        request = self.request
        sent = [(name, value) for name, value in request.headers.items() if name.lower() not in HOP_BY_HOP]
        body = _forward(request, self.copy, self.config.idle_timeout) if request.body_exists else None
        return await session.request(
            request.method, self.target, headers=sent, data=body, allow_redirects=False, compress=None
        )

    async def record(self) -> tuple[dict[str, Any], str, Conversation]:
        """The request record, not yet written, the log's note when it is partial, and the conversation
        it joins (whose envelope it goes to)."""
        request, copy, config = self.request, self.copy, self.config
        data, why = copy.recorded(request.headers.get("Content-Encoding"))
        record = request_record(0.0, request.method, self.target, data, list(request.headers.items()), config.redact)
        conversation = await self.conversations.join(self.provider, record["body"], request.path, self.start)
        record["t"] = round(self.start - conversation.start, 6)  # the conversation's clock
        if why is None:
            return record, "", conversation
        record["partial"] = {"limit": "max-request-body", "kept_bytes": len(copy.kept), "body_bytes": copy.size}
        record["problems"] = [{"kind": "malformed-frame", "message": why}]
        return record, f"; request recorded partial: {why}", conversation

    async def unreachable(self, error: BaseException) -> web.Response:
        """The request recorded with the error as its response, and the client answered 502 (or its
        connection cut, 408, when it was its own request body that stalled)."""
        request, copy = self.request, self.copy
        if copy.failure is None:  # nothing was forwarded: the record holds the request as the client sent it
            await _rest_of_body(request, copy, self.config.idle_timeout)
        record, noted, conversation = await self.record()
        reason = copy.failure or f"the upstream {redact_url(self.base)} could not be reached: {_os_error(error)}"
        record["response"] = {"status": None, "error": reason}
        conversation.writer.write(record)
        self.conversations.release(conversation)
        _log(self.config, f"{request.method} {request.path} → {reason}{noted} → {conversation.writer.file.name}")
        if copy.failure is not None:
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=408)
        return web.Response(status=502, text=f"stream-doctor record: {reason}\n")


async def _exchange(
    request: web.Request, session: ClientSession, conversations: Conversations, base: str, config: ProxyConfig
) -> web.StreamResponse:
    incoming = _Incoming(request, conversations, base, config)
    try:
        upstream = await incoming.send(session)
    except (TimeoutError, ClientError, OSError) as error:
        return await incoming.unreachable(error)
    try:
        record, noted, conversation = await incoming.record()
    except BaseException:
        upstream.close()
        raise
    writer = conversation.writer
    response_headers = list(upstream.headers.items())
    record["response"] = {"status": upstream.status, "headers": redact_headers(response_headers, config.redact)}
    writer.write(record)
    exchange = RecordedExchange(
        writer,
        upstream.headers.get("Content-Type"),
        upstream.headers.get("Content-Encoding"),
        stream_end(incoming.provider),
        config.max_event,
        config.max_capture,
    )
    response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
    for name, value in response_headers:
        if name.lower() not in HOP_BY_HOP:
            response.headers.add(name, value)
    outcome = "complete"
    try:
        await response.prepare(request)
        outcome = await _relay(request, upstream, response, exchange, config.idle_timeout)
    except (TimeoutError, ClientError, OSError) as error:
        outcome = _upstream_broke(request, error, exchange, config.idle_timeout)
    finally:
        upstream.close()
        exchange.end("the proxy stopped")  # (nothing when it ended above)
        conversations.release(conversation)
        _log(
            config,
            f"{request.method} {request.path} {upstream.status} {outcome}, {exchange.events} events, "
            f"{exchange.size} bytes{_capture_limits(exchange, config)}{noted} → {writer.file.name}",
        )
    return response


async def _relay(
    request: web.Request, upstream: Any, response: web.StreamResponse, exchange: RecordedExchange, idle: float
) -> str:
    """The upstream's body to the client, chunk by chunk, each recorded after the client has it; the
    exchange's outcome as the log says it."""
    async for chunk in upstream.content.iter_any():
        try:
            async with asyncio.timeout(idle):
                await response.write(chunk)  # the client first …
        except (ConnectionError, TimeoutError) as error:
            exchange.chunk(chunk)  # the upstream sent it: it belongs to the record
            stalled = isinstance(error, TimeoutError)
            exchange.end(
                f"the client took no bytes for {idle:g} s (--idle-timeout); the proxy closed both connections"
                if stalled
                else "the client disconnected mid-stream; the proxy closed the upstream connection"
            )
            if stalled and request.transport is not None:
                request.transport.abort()
            if exchange.finished:
                return "complete (the client disconnected after the last event)"
            return "client stalled" if stalled else "client disconnected"
        exchange.chunk(chunk)  # … then the record
    exchange.end()
    outcome = "ended inside an event" if exchange.cut is not None else "complete"
    try:
        await response.write_eof()
    except ConnectionError:
        # the OpenAI SDK closes the connection once it has read data: [DONE]: a normal end
        outcome = outcome if exchange.finished else "client disconnected at the end"
    return outcome


def _upstream_broke(request: web.Request, error: BaseException, exchange: RecordedExchange, idle: float) -> str:
    """The exchange ended where the upstream stalled or failed, the client's connection cut as the
    upstream's was; the outcome as the log says it."""
    stalled = isinstance(error, TimeoutError)
    why = (
        f"the upstream sent nothing for {idle:g} s (--idle-timeout)"
        if stalled
        else f"the upstream connection failed: {type(error).__name__}: {error}"
    )
    exchange.end(why)
    if request.transport is not None:
        request.transport.abort()  # the client sees the stream cut too, as it was
    if exchange.finished:
        return "complete (the upstream connection failed after the last event)"
    return "upstream stalled mid-stream" if stalled else "upstream failed mid-stream"


def _capture_limits(exchange: RecordedExchange, config: ProxyConfig) -> str:
    """The log's note on the limits the response's record reached, if any."""
    limits = []
    if exchange.oversized:
        limits.append(f"{exchange.oversized} events cut to --max-event {config.max_event} bytes")
    if exchange.full:
        limits.append(
            f"--max-capture {config.max_capture} bytes reached, {exchange.unrecorded} bytes forwarded but not recorded"
        )
    return f"; capture partial: {'; '.join(limits)}" if limits else ""


def _log(config: ProxyConfig, line: str) -> None:
    """A line of the log: what the client or the upstream put in it (a path, a method, an error) shown escaped."""
    if config.log is not None:
        from stream_doctor.reporters.live_lines import log_line

        config.log(log_line(line))


class _Refused(asyncio.Protocol):
    """A connection beyond ``max_connections``: answered 503 at once, closed a second later (closing
    at once, with the client's request unread, would reset the connection and lose the answer)."""

    BODY = b"stream-doctor record: too many connections (--max-connections)\n"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n"
            b"retry-after: 1\r\ncontent-length: %d\r\n\r\n%s" % (len(self.BODY), self.BODY)
        )
        asyncio.get_running_loop().call_later(1.0, transport.close)

    def data_received(self, data: bytes) -> None:
        pass  # never read


class _Counted(asyncio.Protocol):
    """aiohttp's handler of one connection, counted from its creation to its end, so a burst of
    connections is counted before any of them is set up."""

    def __init__(self, inner: Any, live: list[int]) -> None:
        self.inner = inner
        self.live = live
        live[0] += 1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()  # type: ignore[no-any-return]

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.live[0] -= 1
        self.inner.connection_lost(exc)


async def serve(config: ProxyConfig, host: str, port: int, ready: Callable[[int], None] | None = None) -> None:
    """Run the proxy until cancelled; ``ready`` gets the port it listens on (useful with port 0)."""
    # auto_decompress=False: a request body is forwarded as it came (gzip stays gzip); the
    # keep-alive timeout also closes a connection that has not finished its request head in time
    # (aiohttp arms it when the connection opens, and it closes a connection whose handler is idle).
    runner = web.AppRunner(
        build_app(config),
        access_log=None,
        handle_signals=False,
        auto_decompress=False,
        keepalive_timeout=config.header_timeout,
        shutdown_timeout=_SHUTDOWN,
    )
    await runner.setup()
    try:
        await _listen(config, runner, host, port, ready)
    finally:
        await runner.cleanup()  # also when the port is in use: the upstream session is closed, nothing left open


async def _listen(
    config: ProxyConfig, runner: web.AppRunner, host: str, port: int, ready: Callable[[int], None] | None
) -> None:
    server = runner.server
    assert server is not None
    refused = [0, 0.0]  # how many, and when the last log line about them was written
    live = [0]

    def connection() -> asyncio.Protocol:
        if live[0] < config.max_connections:
            return _Counted(server(), live)
        refused[0] += 1
        now = time.monotonic()
        if now - refused[1] >= 1.0:
            refused[1] = now
            _log(
                config,
                f"refused a connection: {config.max_connections} open (--max-connections); {refused[0]} refused so far",
            )
        return _Refused()

    listener = await asyncio.get_running_loop().create_server(connection, host, port, reuse_address=True)
    try:
        bound = listener.sockets[0].getsockname()[1] if listener.sockets else port
        if ready is not None:
            ready(bound)
        await asyncio.Event().wait()
    finally:
        listener.close()


def cancel_on_signals() -> None:
    """Ctrl-C (SIGINT) and SIGTERM cancel the running task (the server it awaits stops cleanly)."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, task.cancel)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            pass


def run(config: ProxyConfig, host: str, port: int) -> None:
    """The CLI's entry: serve until Ctrl-C (SIGINT) or SIGTERM; stopping closes every conversation
    (its listener's summary)."""

    def ready(bound: int) -> None:
        print(
            f"stream-doctor record: listening on http://{host}:{bound}, forwarding to {redact_url(config.upstream)}, "
            f"envelopes in {config.out} (Ctrl-C to stop)",
            file=sys.stderr,
            flush=True,
        )

    async def main() -> None:
        cancel_on_signals()
        try:
            await serve(config, host, port, ready)
        except asyncio.CancelledError:
            pass

    # The live findings are read on a thread of their own (``stream_doctor.record.live``); the event loop
    # waits up to the switch interval (5 ms by default) each time it wants the GIL back from that
    # thread, which would be an event's delay whenever a turn is being judged: 0.5 ms bounds it.
    sys.setswitchinterval(0.0005)
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
