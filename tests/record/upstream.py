"""A fake LLM upstream on 127.0.0.1 that streams a canned capture, for the recorder's tests.

It runs an aiohttp server in a thread of its own. Each response body is the capture's bytes,
sent one SSE event (or JSON line) per chunk; ``die_after`` cuts the connection after that many
events, mid-event, as an upstream that crashes does.
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from aiohttp import web


@dataclass
class Seen:
    method: str
    path_qs: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeUpstream:
    body: bytes
    content_type: str = "text/event-stream"
    die_after: int | None = None  # events sent before the connection is cut mid-event
    pause: float = 0.0  # seconds between events
    seen: list[Seen] = field(default_factory=list)
    port: int = 0
    sent_events: int = 0
    choose: Callable[[bytes], bytes] | None = None  # the body to send for a request body (default: ``body``)

    def __post_init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def chunks(self, body: bytes) -> list[bytes]:
        if self.content_type == "text/event-stream":
            parts = re.split(rb"(?<=\n\n)", body)
        else:
            parts = body.splitlines(keepends=True)
        return [p for p in parts if p]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        seen = Seen(
            request.method, request.path_qs, {k.lower(): v for k, v in request.headers.items()}, await request.read()
        )
        self.seen.append(seen)
        body = self.choose(seen.body) if self.choose is not None else self.body
        response = web.StreamResponse(headers={"content-type": self.content_type, "request-id": "req_fake"})
        await response.prepare(request)
        for number, chunk in enumerate(self.chunks(body)):
            if self.die_after is not None and number == self.die_after:
                await response.write(chunk[: len(chunk) // 2])
                await asyncio.sleep(0.05)
                assert request.transport is not None
                request.transport.abort()  # the upstream dies mid-event
                return response
            await response.write(chunk)
            self.sent_events += 1
            if self.pause:
                await asyncio.sleep(self.pause)
        await response.write_eof()
        return response

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> FakeUpstream:
        self.thread.start()
        assert self.ready.wait(10), "the fake upstream did not start"
        return self

    def __exit__(self, *args: Any) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
