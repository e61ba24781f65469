"""The frozen options a command runs with, and what a caller said of them: every command's record of
its options is here (``Options`` for one replay, ``MinimizeOptions``, ``CheckOptions``, ``ScanOptions``).

``Given`` is what the command line (or the library API's arguments) said of the options a
configuration file also sets; ``config/resolve.resolve`` layers it over the configuration over the
defaults (as ruff does) into the one ``Options`` record the engine reads. Every command and the API
build their options that way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from stream_doctor.capture.limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_FRAMES, Limits
from stream_doctor.values.findings import Severity

ClientMode = Literal["auto", "run", "model", "both"]
#: --client-mode's modes (clients/runs.py) and what each does, the sentence its help lists
CLIENT_MODES: dict[ClientMode, str] = {
    "auto": "run the installed library when it imports, else its model",
    "run": "require the library",
    "model": "never run it",
    "both": "run it, and where its model differs an info finding SD809",
}


@dataclass(frozen=True)
class Options:
    """The options one replay runs with, resolved (``config/resolve.resolve``); read by the engine."""

    container: str | None = None  # force a capture reader
    provider: str | None = None  # force a provider adapter
    fail_on: Severity = Severity.ERROR
    select: tuple[str, ...] = ()  # code prefixes to keep (empty: all)
    ignore: tuple[str, ...] = ()  # code prefixes to drop
    keep_events: bool = False  # keep every neutral event (the library's report.events; a timeline too)
    tools: str | None = None  # a file of tool definitions for captures whose requests declare none
    executed: tuple[str, ...] = ()  # --executed CALL=JSON: what the application ran, told after the fact
    executions: str | None = None  # --executions FILE: a JSONL file of execute records
    execution_records: tuple[dict[str, Any], ...] = ()  # the library's executions=[...]: execute records
    max_bytes: int = DEFAULT_MAX_BYTES  # per capture, once decompressed
    max_frames: int = DEFAULT_MAX_FRAMES  # per capture
    clients: tuple[str, ...] = ()  # --client: the client profiles to replay each turn through (names)
    client_mode: ClientMode = "auto"  # --client-mode (clients/runs.py)
    node_modules: str | None = None  # --node-modules: the TypeScript libraries' packages (clients/library/node.py)
    timeline: bool = False  # keep the compact timeline rows (--timeline, the HTML report: timeline.py)

    @property
    def limits(self) -> Limits:
        return Limits(self.max_bytes, self.max_frames)


@dataclass(frozen=True)
class Given:
    """What a caller said of the options a configuration file also sets; None (or empty) leaves each
    to the configuration, then to the default (``config/resolve.resolve``)."""

    select: tuple[str, ...] | None = None  # given, it starts afresh: the file's select and ignore no longer apply
    ignore: tuple[str, ...] = ()  # adds to the file's ignore (or, with select given, alone)
    extend_select: tuple[str, ...] = ()  # adds to the file's extend-select
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, codes): added to the file's
    fail_on: Severity | None = None
    provider: str | None = None  # force a provider adapter, over the file's provider and per-path-provider
    container: str | None = None  # force a capture reader
    max_bytes: int | None = None  # per capture, once decompressed
    max_frames: int | None = None  # per capture


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
