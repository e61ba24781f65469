"""A Dask worker plugin for the scan tests: the first worker to start a scan batch dies on the spot."""

from __future__ import annotations

import os
from typing import Any

from distributed import WorkerPlugin


class DieOnFirstBatch(WorkerPlugin):
    """Kill the worker process as it starts executing the first scan batch (one death, cluster-wide)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish != "executing" or not str(key).startswith("scan-batch"):
            return
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        os._exit(1)
