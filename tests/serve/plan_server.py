"""A minimal loopback server that plays ``Plan``s, for the demo agents' tests until ``stream-doctor serve``'s own
server is merged (it replaces this one then): the recorder tests' fake upstream, answering the k-th request,
whatever its path, with the k-th plan, read by read after each pause, then ended or dropped."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from aiohttp import web
from multidict import CIMultiDict

from stream_doctor.serve.wire import Plan
from tests.record.upstream import FakeUpstream, Seen

#: headers the server sets itself (the plan's body is written in chunks)
_FRAMING = {"content-length", "transfer-encoding", "content-encoding"}


@dataclass
class PlanServer(FakeUpstream):
    """``with PlanServer(plans=[…]) as server``: ``server.url`` answers each request with the next plan;
    ``server.seen`` keeps the requests."""

    body: bytes = b""
    plans: list[Plan] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.seen.append(Seen(request.method, request.path_qs, headers, await request.read()))
        if len(self.seen) > len(self.plans):
            return web.json_response({"error": "no recorded turn for this request"}, status=500)
        plan = self.plans[len(self.seen) - 1]
        response = web.StreamResponse(
            status=plan.status, headers=CIMultiDict((k, v) for k, v in plan.headers if k.lower() not in _FRAMING)
        )
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
