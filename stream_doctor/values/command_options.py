"""The frozen options of the commands that drive many replays: ``MinimizeOptions``, ``CheckOptions``,
``ScanOptions``, each built on one replay's ``Options`` and ``Given`` (``values/options.py``).

A module of their own so that a replay, which reads none of them, does not make their classes: a
dataclass's decorator compiles its methods when the class is made (``docs/performance.md``, "Start-up").
"""

from __future__ import annotations

from dataclasses import dataclass

from stream_doctor.values.findings import Severity
from stream_doctor.values.options import Given, Options


@dataclass(frozen=True)
class MinimizeOptions:
    """What ``stream-doctor minimize`` and ``fixture`` (or the library's ``minimize``) were told: the
    findings to keep and how to search; each candidate's replay options are ``given`` resolved (no
    configuration file) on top of ``run``."""

    keep: tuple[str, ...]  # rule codes, each of which must fire in the capture
    call: str | None = None  # keep them on this call: its id, or its number in replay's table
    max_seconds: float | None = None  # stop then with the smallest capture so far; None: no bound
    redact: bool = False  # replace what no kept finding depends on (fixture always does)
    given: Given = Given()  # --provider, --container, --max-bytes, --max-frames (the library's select, ignore)
    run: Options = Options()  # the library's tools


@dataclass(frozen=True)
class CheckOptions:
    """What ``stream-doctor check`` was told on the command line: each capture's options are ``given``
    resolved over the configuration governing it, on top of ``run`` (what no configuration sets)."""

    paths: tuple[str, ...] = ()
    given: Given = Given()
    run: Options = Options()  # --client, --client-mode, --node-modules: every capture's
    jobs: int | None = None  # worker processes; 0: one per CPU
    config: str | None = None  # a configuration file to use instead of searching for one
    isolated: bool = False  # use no configuration file at all
    update_expectations: bool = False  # write each checked capture's expectation sidecar
    keep_reports: bool = True  # keep each replay's JSON report (for the JSON check report; costly for huge captures)
    respect_gitignore: bool = True  # --no-respect-gitignore: walk what .gitignore lists too
    sessions: tuple[str, ...] = ()  # --session: folder globs (from the working directory), each one conversation


@dataclass(frozen=True)
class ScanOptions:
    """What ``stream-doctor scan`` was told on the command line (``scan/run.scan`` reads it)."""

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
