"""``stream-doctor check``: its options and help (typer); the work is ``check_run.run``, which the fast
path (``cli/fast.py``) calls too."""

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


def check(
    paths: Optional[List[str]] = typer.Argument(
        None,
        metavar="PATH...",
        help="Capture files, folders (searched recursively, captures recognised by content) or globs; "
        "- reads the paths from standard input, one a line.",
    ),
    select: List[str] = typer.Option([], "--select", metavar="CODES", help=SELECT_HELP),
    ignore: List[str] = typer.Option([], "--ignore", metavar="CODES", help=IGNORE_HELP),
    extend_select: List[str] = typer.Option([], "--extend-select", metavar="CODES", help=EXTEND_SELECT_HELP),
    per_file_ignores: List[str] = typer.Option(
        [], "--per-file-ignores", metavar="GLOB:CODES", help=PER_FILE_IGNORES_HELP
    ),
    fail_on: Optional[str] = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Fail on an unexpected finding of this severity or above: info, warning, error (default: error).",
    ),
    report: List[str] = typer.Option(
        [],
        "--report",
        "-r",
        metavar="FORMAT[:PATH]",
        help="terminal, json, jsonl, junit, sarif, github, markdown or statistics, written to PATH or standard output "
        "(repeatable).",
    ),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=0, help="Replay in N processes (0: one per CPU)."),
    provider: Optional[str] = typer.Option(
        None, "--provider", metavar="NAME", help="Force the provider for every capture."
    ),
    container: Optional[str] = typer.Option(
        None, "--container", metavar="FORMAT", help="Force the capture format for every capture."
    ),
    config: Optional[str] = typer.Option(None, "--config", help="Use this configuration file; do not search."),
    isolated: bool = typer.Option(False, "--isolated", help="Use no configuration file."),
    respect_gitignore: bool = typer.Option(
        True,
        "--respect-gitignore/--no-respect-gitignore",
        help="Skip what .gitignore files list when searching folders and globs (default: on).",
    ),
    client: List[str] = typer.Option(
        [],
        "--client",
        metavar="NAME",
        help="Also predict what this client would hand the tool, per call of every capture (repeatable, or all; "
        "`stream-doctor clients` lists them). Differences are findings SD801-SD808, in every report.",
    ),
    update_expectations: bool = typer.Option(
        False, "--update-expectations", help="Rewrite the .expect.toml of each failing capture to what it shows now."
    ),
    width: Optional[int] = typer.Option(
        None, "--width", min=1, metavar="COLUMNS", help="Terminal width for the report."
    ),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force colour on or off."),
    max_rows: int = typer.Option(
        200, "--max-rows", min=0, help="Rows per list in text reports before a '… N more' line (0: all)."
    ),
    max_bytes: Optional[str] = typer.Option(None, "--max-bytes", help=MAX_BYTES_HELP),
    max_frames: Optional[int] = typer.Option(None, "--max-frames", min=1, help=MAX_FRAMES_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    exit_zero: bool = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP),
    output_file: Optional[str] = typer.Option(
        None,
        "--output-file",
        "-o",
        metavar="PATH",
        help="Write the report that would go to standard output to PATH instead.",
    ),
    statistics: bool = typer.Option(
        False, "--statistics", help="On standard output, how many findings of each code instead of the report."
    ),
) -> None:
    """Check many captures against their expected findings; write reports for CI."""
    from stream_doctor.cli.check_run import run

    raise typer.Exit(
        run(
            paths=paths,
            select=select,
            ignore=ignore,
            extend_select=extend_select,
            per_file_ignores=per_file_ignores,
            fail_on=fail_on,
            report=report,
            jobs=jobs,
            provider=provider,
            container=container,
            config=config,
            isolated=isolated,
            respect_gitignore=respect_gitignore,
            client=client,
            update_expectations=update_expectations,
            width=width,
            color=color,
            max_rows=max_rows,
            max_bytes=max_bytes,
            max_frames=max_frames,
            quiet=quiet,
            exit_zero=exit_zero,
            output_file=output_file,
            statistics=statistics,
        )
    )
