"""The frozen options one replay runs with (``Options``), and what a caller said of them (``Given``);
the other commands' records, built on these, are in ``values/command_options.py``.

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
