"""The server: each application request answered with its capture's turn, and every exchange recorded.

Requests are grouped into the application's conversations as the recording proxy groups them (a
request that sends back the previous answer continues its conversation: ``record.conversations``),
and each conversation is written to an envelope by the recorder's own writer, so ``judge`` replays it
like any capture; what an answer wrote is recorded once it is written (``recording``: the write path
only writes). The application's k-th request of a conversation gets the capture's k-th response,
written as the ``plan`` says (``wire.as_recorded``: the recorded events, one read each), after
``matching`` has checked the request against the recorded one.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson
from aiohttp import web

from stream_doctor.record.conversations import Conversation, Conversations, ListenerFactory
from stream_doctor.record.writer import request_record
from stream_doctor.serve.endpoints import error_body, providers_of, shape_of
from stream_doctor.serve.lines import Kept, PlanLines
from stream_doctor.serve.load import Script
from stream_doctor.serve.matching import Choice, Difference, compare
from stream_doctor.serve.recording import Recording, Recordings
from stream_doctor.serve.retries import Latest, digest, retry_count
from stream_doctor.serve.wire import IDLE_TIMEOUT, MAX_REQUEST, TURN_HEADER, Plan, Recorded, as_recorded

#: Seconds the exchanges still running when the server stops get to end.
_SHUTDOWN = 2.0
#: Seconds the answers written get at the stop to be recorded (``Recordings.finished``; within
#: ``running._WAIT``, the time a test's stop waits for the server).
_RECORDED = 20.0


@dataclass
class ServeConfig:
    scripts: tuple[Script, ...]
    out: str  # folder for the envelopes of what the application sent and was served
    plan: Callable[[Recorded], Plan] = as_recorded
    max_request: int = MAX_REQUEST
    idle_timeout: float = IDLE_TIMEOUT  # seconds a blocked write or a stalled request body is waited on
    log: Callable[[str], None] | None = None
    listen: ListenerFactory | None = None  # watches each conversation as it is written (``judge.Watching``)


@dataclass
class ServedTurn:
    """One answer written to the application: how many of its reads went out, and how it ended."""

    number: int
    reads: int
    status: int = 200
    written: int = 0
    #: "served", "disconnected" (the application closed the connection), "stalled" (it read nothing for the
    #: idle timeout: dropped), "cut" (the plan)
    ending: str = "served"
    over: bool = False  # the answer is written (or given up): a retry of it may come

    def failed(self) -> bool:
        """Whether the client saw this answer fail: an error status, or a stream it did not get whole."""
        return self.status >= 400 or self.ending in ("disconnected", "stalled", "cut")


@dataclass
class Served:
    """One conversation of the application's: the capture answering it, and what happened turn by turn."""

    envelope: str
    script: Script
    turns: list[ServedTurn] = field(default_factory=list)
    refused: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    beyond: list[int] = field(default_factory=list)  # requests past the capture's last turn: recorded, answered 400
    noted: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    #: earlier attempts of a turn the application retried (``turns`` holds each turn's last attempt)
    retried: list[ServedTurn] = field(default_factory=list)
    #: the history of the last request served: a refused request does not move the conversation on, so
    #: the application's retry of that turn continues it (``record.conversations`` groups by history)
    history: tuple[bytes, ...] = ()


class Session:
    """What one run of the server holds: the conversations, and what each was served."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.recordings = Recordings(config.listen)
        listen = self.recordings.listener if config.listen is not None else None
        self.conversations = Conversations(config.out, "stream-doctor serve", listen, log=config.log)
        self.served: dict[int, Served] = {}
        self.latest = Latest()
        self.choice = Choice()  # the script each new conversation is answered by
        self.kept = Kept()  # each plan's envelope lines, made once

    def close(self) -> list[Served]:
        """Every envelope closed; what each conversation was served, in order."""
        self.conversations.close()
        return [self.served[number] for number in sorted(self.served)]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        providers = providers_of(path)
        if providers is None:
            return self._refuse(request, shape_of(path), 404, f"stream-doctor serve: no provider endpoint at {path}")
        if request.method != "POST":
            return self._refuse(
                request,
                shape_of(path),
                405,
                f"stream-doctor serve: {request.method} is not allowed on {path}; use POST",
            )
        scripts = [s for s in self.config.scripts if s.provider in providers]
        if not scripts:
            served = ", ".join(sorted({s.provider for s in self.config.scripts}))
            return self._refuse(
                request, shape_of(path), 404, f"stream-doctor serve: no capture answers {path} (serving {served})"
            )
        data = await self._read(request, scripts[0].provider)
        if isinstance(data, web.Response):
            return data
        try:
            body = orjson.loads(data) if data else {}
        except orjson.JSONDecodeError:
            return self._refuse(request, scripts[0].provider, 400, "stream-doctor serve: the request body is not JSON")
        start = time.monotonic()
        key = digest(data)
        retried = self.latest.retried(key, retry_count(request.headers), self._failed)
        conversation = await self.conversations.rejoin(retried) if retried is not None else None
        if conversation is None:
            conversation = await self.conversations.join(scripts[0].provider, body, path, start)
        try:
            return await self._answer(request, conversation, scripts, body, data, start, retried is not None)
        finally:
            self.conversations.release(conversation)

    async def _read(self, request: web.Request, provider: str) -> bytes | web.Response:
        """The request body, its content codings undone; else the refusal to answer (too large, too slow, undecodable)."""
        idle, limit = self.config.idle_timeout, self.config.max_request
        try:
            async with asyncio.timeout(idle):
                data = await _body(request, limit)
        except TimeoutError:
            message = f"stream-doctor serve: the request body did not arrive whole within {idle:g} s"
            return self._refuse(request, provider, 408, message)
        if data is None:
            message = f"stream-doctor serve: the request is larger than --max-request {limit} bytes"
            return self._refuse(request, provider, 413, message)
        decoded = _decoded(data, request.headers.get("Content-Encoding"), limit)
        return self._refuse(request, provider, *decoded) if isinstance(decoded, tuple) else decoded

    def _failed(self, number: int) -> bool:
        """Whether conversation ``number``'s latest answer is over and failed, as a client retries one."""
        served = self.served.get(number)
        last = served.turns[-1] if served is not None and served.turns else None
        return last is not None and last.over and last.failed()

    async def _answer(
        self,
        request: web.Request,
        conversation: Conversation,
        scripts: list[Script],
        body: Any,
        data: bytes,
        start: float,
        retry: bool,
    ) -> web.StreamResponse:
        served = self.served.get(conversation.number)
        if served is None:
            served = Served(conversation.path, self.choice.chosen(scripts, body))
            self.served[conversation.number] = served
        script = served.script
        last = served.turns[-1] if served.turns else None
        number = last.number if retry and last is not None else len(served.turns) + 1
        record = request_record(
            round(start - conversation.start, 6), request.method, str(request.url), data, list(request.headers.items())
        )
        if number > len(script.turns):
            served.beyond.append(number)
            difference = Difference(
                refused=(f"the capture ends at turn {len(script.turns)}; this is request {number}",)
            )
        else:
            difference = compare(script.provider, script.turns[number - 1].request, body)
        if difference.noted:
            served.noted.append((number, difference.noted))
        if difference.refused:
            if number <= len(script.turns):
                served.refused.append((number, difference.refused))
            message = f"stream-doctor serve: turn {number} of {script.name} does not answer this request: " + "; ".join(
                difference.refused
            )
            record["response"] = {"status": 400, "error": message}
            conversation.writer.write(record)
            conversation.history = served.history
            self._log(f"{request.path} turn {number}: refused ({'; '.join(difference.refused)})")
            return _error(script.provider, 400, message)
        recorded = script.turns[number - 1].recorded
        # a retry gets the turn as recorded: a variant (a fault above all) answers the first attempt
        plan = as_recorded(recorded) if retry else self.config.plan(recorded)
        record["response"] = {"status": plan.status, "headers": dict(plan.headers)}
        conversation.writer.write(record)
        served.history = conversation.history
        turn = ServedTurn(number, len(plan.reads), plan.status)
        if retry and last is not None:
            served.retried.append(served.turns.pop())
        served.turns.append(turn)
        self.latest.served(conversation.number, digest(data))
        try:
            lines = self.kept.lines(recorded, plan, retry)
            response = await _play(
                request, recorded, lines, turn, conversation, self.config.idle_timeout, self.recordings
            )
        finally:
            turn.over = True
        self._log(
            f"{request.path} turn {number} of {script.name}: {turn.ending} after {turn.written} of {turn.reads} reads"
        )
        return response

    def _refuse(self, request: web.Request, provider: str, status: int, message: str) -> web.Response:
        """An answer the server gives itself (no turn served, nothing recorded), said in the log too."""
        self._log(f"{request.method} {request.path}: {status} ({message.removeprefix('stream-doctor serve: ')})")
        return _error(provider, status, message)

    def _log(self, line: str) -> None:
        if self.config.log is not None:
            self.config.log(f"stream-doctor serve: {line}")


async def _body(request: web.Request, limit: int) -> bytes | None:
    """The request body, or None when it is larger than ``limit`` (read no further than that)."""
    if request.content_length is not None and request.content_length > limit:
        return None
    parts: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_any():
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


def _decoded(data: bytes, encoding: str | None, limit: int) -> bytes | tuple[int, str]:
    """The request body with the codings its ``Content-Encoding`` lists undone (the last applied first, as the
    capture readers undo a recorded body's: gzip, deflate, br, zstd), none making more than ``limit`` bytes;
    else the status and why: 413 for a body that decompresses past the limit (a decompression bomb costs at
    most ``limit``), 400 for one a coding cannot undo (damaged, cut short, a coding not known)."""
    from stream_doctor.capture.codings import Overflow, Undecodable, codings, undo

    for coding in reversed(codings(encoding)):
        try:
            data = undo(data, coding, limit)
        except Overflow:
            return 413, f"stream-doctor serve: the {coding} request body decompresses past --max-request {limit} bytes"
        except Undecodable as why:
            return 400, f"stream-doctor serve: the request body's Content-Encoding {coding} cannot be undone: {why}"
    return data


def _error(provider: str, status: int, message: str) -> web.Response:
    body, headers = error_body(provider, status, message)
    return web.Response(status=status, body=body, headers=headers)


async def _play(
    request: web.Request,
    recorded: Recorded,
    lines: PlanLines,
    turn: ServedTurn,
    conversation: Conversation,
    idle: float,
    recordings: Recordings,
) -> web.StreamResponse:
    """Write the plan to the application, then record what went out (``recording``: off the write path, from
    the plan's lines when all of it went out); an application that reads nothing for ``idle`` seconds (a write
    blocked that long) is dropped."""
    plan = lines.plan
    exchange = lines.exchange(conversation.writer)
    recording = Recording(exchange, plan.reads, lines)
    response, compressor = _response(recorded, plan, turn)
    loop = asyncio.get_running_loop()
    cause: str | None = None
    pending = recordings.pending.get(conversation.path)
    if pending is not None:
        pending.recorded.clear()
    try:
        try:
            await _write(request, response, plan, compressor, recording, turn, idle)
            if plan.then == "close":
                turn.ending = "cut"
                cause = "the server cut the stream as its plan says"
                _drop(request)
        except TimeoutError:
            turn.ending = "stalled"
            cause = f"the application read nothing for {idle:g} s after {turn.written} of {turn.reads} reads"
            _drop(request)
        except ConnectionError:
            if turn.written < turn.reads:
                turn.ending = "disconnected"
            cause = f"the application closed the connection after {turn.written} of {turn.reads} reads"
        except asyncio.CancelledError:
            turn.ending = "stopped"
            recording.record_now(f"the server stopped after {turn.written} of {turn.reads} reads", loop.time())
            raise
        ended = loop.time()
        try:
            await recordings.record(recording, conversation.path, cause, ended)
        except asyncio.CancelledError:  # the server stops: the rest at once
            recording.record_now(cause, ended)
            raise
    finally:
        if pending is not None:
            pending.recorded.set()
    return response


def _response(recorded: Recorded, plan: Plan, turn: ServedTurn) -> tuple[web.StreamResponse, Any]:
    """The response's status and headers, and the compressor of its reads when the capture's body was coded."""
    response = web.StreamResponse(status=plan.status)
    for name, value in plan.headers:
        response.headers[name] = value
    response.headers[TURN_HEADER] = str(turn.number)  # which turn answered: the application's log can say
    compressor = None
    if recorded.encoding is not None:
        wbits = zlib.MAX_WBITS | 16 if recorded.encoding != "deflate" else zlib.MAX_WBITS
        compressor = zlib.compressobj(wbits=wbits)
        response.headers["Content-Encoding"] = "gzip" if recorded.encoding != "deflate" else "deflate"
    return response, compressor


async def _write(
    request: web.Request,
    response: web.StreamResponse,
    plan: Plan,
    compressor: Any,
    recording: Recording,
    turn: ServedTurn,
    idle: float,
) -> None:
    """Each read of ``plan`` written (only written: its time kept, ``recording`` reads it afterwards), then
    the end (unless the plan closes the connection); TimeoutError once no write has gone out for ``idle``
    seconds (at most an eighth more: the one deadline is moved on every eighth of it, not at every read,
    which would cost a timer per event)."""
    loop = asyncio.get_running_loop()
    times = recording.times
    async with asyncio.timeout(None) as deadline:
        moved = loop.time()
        deadline.reschedule(moved + idle * 9 / 8)
        await response.prepare(request)
        for pause, data in plan.reads:
            if pause > 0:
                deadline.reschedule(loop.time() + pause + idle * 9 / 8)
                await asyncio.sleep(pause)
            # each read flushed on its own: the client gets it when the plan says, compressed or not
            await response.write(
                compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH) if compressor else data
            )
            now = loop.time()
            times.append(now)
            turn.written += 1
            if now - moved > idle / 8:
                moved = now
                deadline.reschedule(now + idle * 9 / 8)
        if plan.then == "close":
            return
        if compressor is not None:
            await response.write(compressor.flush())
        recording.whole = loop.time()
        await response.write_eof()


def _drop(request: web.Request) -> None:
    """The connection closed at once, without a clean end of the body: the client must notice."""
    if request.transport is not None:
        request.transport.abort()


async def serve(config: ServeConfig, host: str, port: int, ready: Callable[[int], None] | None = None) -> list[Served]:
    """Serve until cancelled; ``ready`` gets the port (useful with port 0). Returns what each conversation was served."""
    session = Session(config)
    app = web.Application(client_max_size=config.max_request)
    app.router.add_route("*", "/{tail:.*}", session.handle)
    # auto_decompress=False: a compressed request body is undone by ``_decoded``, under --max-request, with
    # the codings the capture readers know and a provider-shaped answer for one it cannot undo
    runner = web.AppRunner(
        app, access_log=None, handle_signals=False, shutdown_timeout=_SHUTDOWN, auto_decompress=False
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, reuse_address=True)
        await site.start()
        if ready is not None:
            addresses = runner.addresses  # the port bound (port 0: the one the system chose)
            ready(addresses[0][1] if addresses else port)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass
        await session.recordings.finished(_RECORDED)
    finally:
        await runner.cleanup()
    return session.close()


def run(config: ServeConfig, host: str, port: int, ready: Callable[[int], None]) -> list[Served]:
    """The CLI's entry: serve until Ctrl-C (SIGINT) or SIGTERM, then hand back what was served."""
    from stream_doctor.record.proxy import cancel_on_signals

    async def main() -> list[Served]:
        cancel_on_signals()
        return await serve(config, host, port, ready)

    return asyncio.run(main())
