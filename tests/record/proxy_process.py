"""``stream-doctor record`` as a user runs it: a subprocess under an address-space limit (``RLIMIT_AS``)
on 127.0.0.1 and a free port, its standard error collected line by line, its peak memory read from
``/proc`` (``VmHWM``) and its exit code taken at a SIGTERM, as a test harness stops it.

``proxy_server.RunningProxy`` runs the proxy in a thread of the test process instead, for tests that
reach into it (a listener replaced, the live findings read as values).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

MiB = 1024 * 1024
ADDRESS_SPACE = 1024 * MiB  # far above what the limits need, far below what the attacks would take
#: Peak resident memory the proxy may reach: its own start (~45 MiB) plus a margin for aiohttp's
#: buffers, plus a few times the largest limit given.
BASELINE = 100 * MiB


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


class Proxy:
    """``stream-doctor record`` in a subprocess; ``lines`` collects its standard error."""

    def __init__(self, upstream: str, out: Path, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stream_doctor", "record", "--upstream", upstream, "--listen", "127.0.0.1:0"]
            + ["--out", str(out), *options],
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=os.environ | {"PYTHONPATH": str(ROOT)},  # this checkout's code, whatever is installed
            preexec_fn=_limit_address_space,
        )
        assert self.process.stderr is not None
        started = self.process.stderr.readline()
        assert "listening on http://127.0.0.1:" in started, started
        self.port = int(started.split("http://127.0.0.1:")[1].split(",")[0])
        self.url = f"http://127.0.0.1:{self.port}"
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for_lines(self, count: int, timeout: float = 30) -> list[str]:
        """The first ``count`` exchange lines of the log (``METHOD PATH … → …``), once there are that many."""
        deadline = time.monotonic() + timeout
        while len([line for line in self.lines if " → " in line]) < count:
            assert self.process.poll() is None, f"the proxy died: {self.process.returncode} {self.lines}"
            assert time.monotonic() < deadline, f"no log line: {self.lines}"
            time.sleep(0.02)
        return [line for line in self.lines if " → " in line]

    def peak(self) -> int:
        """The proxy's peak resident memory so far, in bytes."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, as a harness stops the proxy after its agent ran; its exit code, once its log is read."""
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        self.reader.join(timeout)
        return code

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *args: Any) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(10)
