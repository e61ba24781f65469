"""What ``stream-doctor scan`` was told on the command line, frozen."""

from __future__ import annotations

from dataclasses import dataclass

from stream_doctor.values.findings import Severity
from stream_doctor.values.options import Given


@dataclass(frozen=True)
class ScanOptions:
    inputs: tuple[str, ...]  # folders, files, globs, fsspec URLs, tables
    out: str = "scan-findings.parquet"  # one row per finding
    status: str | None = None  # one row per capture; default: next to ``out`` (``*.status.parquet``)
    summaries: tuple[str, ...] = ()  # summary files, Markdown (.md) or JSON (.json) by extension
    body_column: str | None = None  # set: the inputs are tables (Parquet, or JSONL one capture per row)
    id_column: str | None = None
    model_column: str | None = None  # the model when the stream does not name one
    meta_columns: tuple[str, ...] = ()  # carried into every finding and status row, as text
    scheduler: str | None = None  # an existing Dask scheduler; None: a LocalCluster
    workers: int | None = None  # LocalCluster worker processes; None: one per CPU
    batch_size: int | None = None  # captures per task; None: sized from the number of workers
    sample: int | None = None  # scan this many captures, drawn at random (seeded)
    seed: int = 0
    resume: bool = False  # keep what the outputs hold and scan only the captures they lack
    given: Given = Given()  # --provider, --container, --select, --ignore: how every capture is replayed
    fail_on: Severity | None = None  # exit 1 when a finding reaches it; None: a survey never fails

    @property
    def status_path(self) -> str:
        if self.status is not None:
            return self.status
        stem = self.out[: -len(".parquet")] if self.out.endswith(".parquet") else self.out
        return f"{stem}.status.parquet"
