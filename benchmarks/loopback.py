"""The benchmarks' loopback upstream: an aiohttp handler served at ``POST /v1/messages`` on
127.0.0.1, on a free port, in this process (on a thread) or in one of its own."""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def serve_forever(handle: Handler, bound: Callable[[int], object]) -> None:
    """Serve ``handle`` until the process ends, handing the port to ``bound`` once it listens."""

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        bound(runner.addresses[0][1])
        await asyncio.Event().wait()

    asyncio.run(main())


def on_thread(handle: Handler) -> str:
    """``serve_forever`` on a daemon thread of this process; the server's base URL."""
    ports: queue.Queue[int] = queue.Queue()
    threading.Thread(target=serve_forever, args=(handle, ports.put), daemon=True).start()
    return f"http://127.0.0.1:{ports.get(timeout=30)}"
