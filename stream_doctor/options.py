"""The frozen options a command runs with, built by the CLI and read by the engine."""

from __future__ import annotations

from dataclasses import dataclass

from stream_doctor.findings import Severity


@dataclass(frozen=True)
class Options:
    container: str | None = None  # force a capture reader
    provider: str | None = None  # force a provider adapter
    fail_on: Severity = Severity.ERROR
    select: tuple[str, ...] = ()  # code prefixes to keep (empty: all)
    ignore: tuple[str, ...] = ()  # code prefixes to drop
    keep_events: bool = False  # keep every neutral event (for --timeline)
