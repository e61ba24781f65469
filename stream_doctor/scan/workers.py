"""What the local cluster's worker processes need to behave well in a terminal."""

from __future__ import annotations

import signal
import threading
from typing import Any

from distributed import WorkerPlugin


class IgnoreCtrlC(WorkerPlugin):
    """A worker started by ``scan`` ignores SIGINT: Ctrl-C reaches the whole process group, and only
    the scan itself should act on it (stop between batches, close its tables, stop the cluster).
    Registered on the cluster, so a worker restarted after a death gets it too."""

    name = "stream-doctor-ignore-ctrl-c"

    def setup(self, worker: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
