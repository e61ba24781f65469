"""A server running on a thread of its own, for a test or a library user: started on a free loopback
port, stopped and judged when asked (what the pytest fixture ``stream_doctor_server`` hands a test)."""

from __future__ import annotations

import asyncio
import tempfile
import threading
from typing import Callable

from stream_doctor.serve.endpoints import SERVED, environment_lines
from stream_doctor.serve.judge import Judged, judge, render, watching, worst
from stream_doctor.serve.load import load_scripts
from stream_doctor.serve.server import ServeConfig, Served, serve
from stream_doctor.serve.wire import Plan, Recorded, as_recorded

#: Seconds to wait for the server to listen, and then to stop.
_WAIT = 30.0


class RunningServer:
    """``url`` is the base URL (``/v1`` appended for OpenAI's SDKs); ``stop()`` ends it and judges."""

    def __init__(
        self,
        *captures: str,
        out: str | None = None,
        plan: Callable[[Recorded], Plan] = as_recorded,
        host: str = "127.0.0.1",
        max_request: int | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        scripts = tuple(script for path in captures for script in load_scripts(path))
        self.out = out if out is not None else tempfile.mkdtemp(prefix="stream-doctor-serve-")
        self.watching = watching()
        self.config = ServeConfig(scripts, self.out, plan, listen=self.watching.queued)
        if max_request is not None:
            self.config.max_request = max_request
        if idle_timeout is not None:
            self.config.idle_timeout = idle_timeout
        self.host = host
        self.port = 0
        self.judged: list[Judged] | None = None
        self._served: list[Served] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._listening = threading.Event()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="stream-doctor-serve", daemon=True)
        self._thread.start()
        if not self._listening.wait(_WAIT) or self._failed is not None:
            raise RuntimeError(f"stream-doctor serve did not start: {self._failed}")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def environment(self) -> dict[str, str]:
        """Every SDK's base-URL variable (and dummy key) set to this server: what an application run needs."""
        lines = environment_lines(self.url, sorted(SERVED))
        return dict(line.split("=", 1) for line in lines)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()  # main()'s own task
            self._served = await serve(self.config, self.host, 0, self._ready)

        try:
            asyncio.run(main())
        except BaseException as error:  # noqa: BLE001 - said by the thread that waits for it
            self._failed = error
            self._listening.set()

    def _ready(self, port: int) -> None:
        self.port = port
        self._listening.set()

    def stop(self) -> list[Judged]:
        """Stop serving (the exchanges still running get a moment to end) and judge every conversation."""
        if self.judged is None:
            if self._loop is not None and self._task is not None:
                self._loop.call_soon_threadsafe(self._task.cancel)
            self._thread.join(_WAIT)
            self.watching.drain()
            self.judged = judge(self._served, self.watching.held)
        return self.judged

    def report(self) -> str:
        """The verdicts as ``stream-doctor serve`` prints them."""
        return render(self.stop())

    def worst(self) -> str | None:
        """The worst verdict's severity (``info``, ``warning``, ``error``), or None when there is none."""
        reached = worst(self.stop())
        return reached.label if reached is not None else None
