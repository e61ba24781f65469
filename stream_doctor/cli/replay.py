"""``stream-doctor replay``: its options and help (typer); the work is ``replay_run.run``, which the
fast path (``cli/fast.py``) calls too."""

from __future__ import annotations

from typing import List, Optional

import typer

from stream_doctor.cli.options import (
    EXIT_ZERO_HELP,
    EXTEND_SELECT_HELP,
    IGNORE_HELP,
    MAX_BYTES_HELP,
    MAX_FRAMES_HELP,
    PER_FILE_IGNORES_HELP,
    QUIET_HELP,
    SELECT_HELP,
)


def replay(
    capture: List[str] = typer.Argument(
        ...,
        help="Capture file (.sse, .jsonl, .json, .har, a VCR cassette, optionally gzip-compressed), or - for stdin. "
        "Several files, or a folder of them (the envelopes the recording proxy writes), are replayed as one "
        "conversation in the order they were recorded.",
    ),
    call: Optional[str] = typer.Option(
        None, "--call", help="Show one call (by id or number): its fragments and reassembled input."
    ),
    timeline: bool = typer.Option(
        False, "--timeline", help="Show every event with its position (runs of deltas folded)."
    ),
    output: str = typer.Option(
        "terminal",
        "--format",
        "-f",
        metavar="FORMAT",
        help="Report format: terminal, json, jsonl or html (a self-contained page: use with -o report.html).",
    ),
    container: Optional[str] = typer.Option(
        None,
        "--container",
        "--input-format",
        metavar="FORMAT",
        help="Force the capture format: sse, jsonl, envelope, json, eventstream, prefixed, har, vcr, recording.",
    ),
    provider: Optional[str] = typer.Option(
        None, "--provider", metavar="NAME", help="Force the provider (e.g. anthropic)."
    ),
    tools: Optional[str] = typer.Option(
        None,
        "--tools",
        metavar="FILE",
        help="Tool definitions (JSON or YAML) to validate calls against when no request declares them.",
    ),
    executed: List[str] = typer.Option(
        [],
        "--executed",
        metavar="CALL=JSON",
        help="What your application ran, told after the fact: a call (number in the table, id or tool name) "
        "and the input it ran with, e.g. --executed 1='{}' (repeatable). Runs the execution checks (SD1xx).",
    ),
    executions: Optional[str] = typer.Option(
        None,
        "--executions",
        metavar="FILE",
        help="A JSONL file of execute records (call_id or name, input) to add to the capture.",
    ),
    client: List[str] = typer.Option(
        [],
        "--client",
        metavar="NAME",
        help="Also predict what this client would hand the tool, per call (repeatable, or all; "
        "`stream-doctor clients` lists them). Differences are findings SD801-SD808.",
    ),
    fail_on: Optional[str] = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Exit 1 when a finding reaches this severity: info, warning, error (default: error).",
    ),
    select: List[str] = typer.Option([], "--select", metavar="CODES", help=SELECT_HELP),
    ignore: List[str] = typer.Option([], "--ignore", metavar="CODES", help=IGNORE_HELP),
    extend_select: List[str] = typer.Option([], "--extend-select", metavar="CODES", help=EXTEND_SELECT_HELP),
    per_file_ignores: List[str] = typer.Option(
        [], "--per-file-ignores", metavar="GLOB:CODES", help=PER_FILE_IGNORES_HELP
    ),
    width: Optional[int] = typer.Option(
        None, "--width", min=1, metavar="COLUMNS", help="Terminal width for the report."
    ),
    color: Optional[bool] = typer.Option(
        None, "--color/--no-color", help="Force colour on or off (default: on for a terminal)."
    ),
    config: Optional[str] = typer.Option(
        None,
        "--config",
        metavar="FILE",
        help="Use this configuration file; by default the one nearest the capture's folder is used.",
    ),
    isolated: bool = typer.Option(False, "--isolated", help="Use no configuration file."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    exit_zero: bool = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP),
    output_file: Optional[str] = typer.Option(
        None, "--output-file", "-o", metavar="PATH", help="Write the report to PATH instead of standard output."
    ),
    max_rows: int = typer.Option(
        200, "--max-rows", min=0, help="Rows per list in text reports before a '… N more' line (0: all)."
    ),
    max_bytes: Optional[str] = typer.Option(None, "--max-bytes", help=MAX_BYTES_HELP),
    max_frames: Optional[int] = typer.Option(None, "--max-frames", min=1, help=MAX_FRAMES_HELP),
    statistics: bool = typer.Option(
        False, "--statistics", help="Print how many findings of each code instead of the report."
    ),
) -> None:
    """Replay a capture (or one session's captures) through the reference accumulator and report every problem."""
    from stream_doctor.cli.replay_run import run

    raise typer.Exit(
        run(
            capture=capture,
            call=call,
            timeline=timeline,
            output=output,
            container=container,
            provider=provider,
            tools=tools,
            executed=executed,
            executions=executions,
            client=client,
            fail_on=fail_on,
            select=select,
            ignore=ignore,
            extend_select=extend_select,
            per_file_ignores=per_file_ignores,
            width=width,
            color=color,
            config=config,
            isolated=isolated,
            quiet=quiet,
            exit_zero=exit_zero,
            output_file=output_file,
            max_rows=max_rows,
            max_bytes=max_bytes,
            max_frames=max_frames,
            statistics=statistics,
        )
    )
