"""The recording proxy run in a thread of the test process, on 127.0.0.1 and a free port."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from stream_doctor.record.live import Live
from stream_doctor.record.proxy import ProxyConfig, serve
from stream_doctor.values.options import Options


class RunningProxy:
    def __init__(
        self, upstream: str, out: str, redact: frozenset[str] = frozenset(), options: Options | None = None
    ) -> None:
        self.lines: list[str] = []
        self.live_lines: list[str] = []  # the live findings and summaries (``stream_doctor.record.live``)
        self.live = Live(options or Options(), self.live_lines.append, self.lines.append)
        self.config = ProxyConfig(upstream, out, redact, log=self.lines.append, listen=self.live.queued)
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.task = self.loop.create_task(serve(self.config, "127.0.0.1", 0, self._bound))
        try:
            self.loop.run_until_complete(self.task)
        except asyncio.CancelledError:
            pass

    def _bound(self, port: int) -> None:
        self.port = port
        self.ready.set()

    def __enter__(self) -> RunningProxy:
        self.thread.start()
        assert self.ready.wait(10), "the proxy did not start"
        return self

    def __exit__(self, *args: Any) -> None:
        self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(10)
        self.loop.close()
        assert self.live.drain(10), "the live findings did not catch up"
