"""``stream-doctor replay``: its options, declared once as the fields of ``Replay`` (typer reads
each field's ``Annotated`` declaration, ``typer_app.command``); the work is ``replay_run.run``, which
``typer_app.WORK`` names, so the import graph runs one way: the work imports the options, never back.

No ``from __future__ import annotations`` here: typer reads these annotations at start-up, and as
strings each would be compiled and evaluated again on every run (about 2 ms per command record).
"""

from typing import Annotated, List, NamedTuple, Optional

import typer

from stream_doctor.cli.shared_options import (
    ClientMode,
    Container,
    ExitZero,
    ExtendSelect,
    Ignore,
    Isolated,
    MaxBytes,
    MaxFrames,
    MaxRows,
    NodeModules,
    PerFileIgnores,
    Provider,
    Quiet,
    ReportWidth,
    Select,
    Severity,
    client_option,
    closed,
    fail_on_option,
    output_file_option,
)
from stream_doctor.reporters import FORMATS


class Replay(NamedTuple):
    """Replay a capture (or one session's captures) through the reference accumulator and report every problem."""

    capture: Annotated[
        List[str],
        typer.Argument(
            help="Capture file (.sse, .jsonl, .json, .har, a VCR cassette, optionally gzip-compressed), or - for "
            "stdin. Several files, or a folder of them (the envelopes the recording proxy writes), are replayed as "
            "one conversation in the order they were recorded.",
        ),
    ]
    call: Annotated[
        Optional[str],
        typer.Option("--call", help="Show one call (by id or number): its fragments and reassembled input."),
    ] = None
    timeline: Annotated[
        bool, typer.Option("--timeline", help="Show every event with its position (runs of deltas folded).")
    ] = False
    output: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            parser=closed("--format", "format", lambda: FORMATS),
            help=f"Report format: {', '.join(FORMATS)} (html: a self-contained page; use with -o report.html, not "
            "written to a terminal).",
        ),
    ] = "terminal"
    container: Container = None
    provider: Provider = None
    tools: Annotated[
        Optional[str],
        typer.Option(
            "--tools",
            metavar="FILE",
            help="Tool definitions (JSON or YAML) to validate calls against when no request declares them.",
        ),
    ] = None
    executed: Annotated[
        List[str],
        typer.Option(
            "--executed",
            metavar="CALL=JSON",
            help="What your application ran, told after the fact: a call (number in the table, id or tool name) "
            "and the input it ran with, e.g. --executed 1='{}' (repeatable). Runs the execution checks (SD1xx).",
        ),
    ] = []
    executions: Annotated[
        Optional[str],
        typer.Option(
            "--executions",
            metavar="FILE",
            help="A JSONL file of execute records (call_id or name, input) to add to the capture.",
        ),
    ] = None
    client: Annotated[List[str], client_option(", per call")] = []
    client_mode: ClientMode = "auto"
    node_modules: NodeModules = None
    fail_on: Annotated[Optional[Severity], fail_on_option("when a finding reaches this severity")] = None
    select: Select = []
    ignore: Ignore = []
    extend_select: ExtendSelect = []
    per_file_ignores: PerFileIgnores = []
    width: ReportWidth = None
    color: Annotated[
        Optional[bool], typer.Option("--color/--no-color", help="Force colour on or off (default: on for a terminal).")
    ] = None
    config: Annotated[
        Optional[str],
        typer.Option(
            "--config",
            metavar="FILE",
            help="Use this configuration file; by default the one nearest the capture's folder is used.",
        ),
    ] = None
    isolated: Isolated = False
    quiet: Quiet = False
    exit_zero: ExitZero = False
    output_file: Annotated[
        Optional[str], output_file_option("Write the report to PATH instead of standard output.")
    ] = None
    max_rows: MaxRows = 200
    max_bytes: MaxBytes = None
    max_frames: MaxFrames = None
    statistics: Annotated[
        bool, typer.Option("--statistics", help="Print how many findings of each code instead of the report.")
    ] = False
