"""A minimal loopback server that plays ``Plan``s, for the demo agents' tests until ``stream-doctor serve``'s own
server is merged (it replaces this one then): the k-th request, whatever its path, is answered with the k-th
plan, read by read after each pause, then ended or dropped; every request's path and body are kept."""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from stream_doctor.serve.wire import Plan

#: headers the server sets itself (the plan's body is written in chunks)
_FRAMING = {"content-length", "transfer-encoding", "content-encoding"}


class PlanServer:
    """``with PlanServer(plans) as server``: ``server.url`` answers each request with the next plan."""

    def __init__(self, plans: list[Plan]) -> None:
        self.plans = plans
        self.requests: list[tuple[str, bytes]] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.url = ""

    def __enter__(self) -> PlanServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=10)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._answer)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def _answer(self, request: web.Request) -> Any:
        self.requests.append((request.path, await request.read()))
        if len(self.requests) > len(self.plans):
            return web.json_response({"error": "no recorded turn for this request"}, status=500)
        plan = self.plans[len(self.requests) - 1]
        headers = CIMultiDict((k, v) for k, v in plan.headers if k.lower() not in _FRAMING)
        response = web.StreamResponse(status=plan.status, headers=headers)
        await response.prepare(request)
        for pause, data in plan.reads:
            if pause:
                await asyncio.sleep(pause)
            if data:
                await response.write(data)
        if plan.then == "close":
            assert request.transport is not None
            request.transport.close()  # the body's end never comes: the client sees the connection drop
            return response
        await response.write_eof()
        return response
