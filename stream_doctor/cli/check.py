"""``stream-doctor check``: its options, declared once as the fields of ``Check`` (typer reads each
field's ``Annotated`` declaration, ``typer_app.command``); the work is ``check_run.run``.

No ``from __future__ import annotations``, as in ``cli/replay.py``: typer reads the annotations.
"""

from typing import Annotated, List, NamedTuple, Optional

import typer

from stream_doctor.cli.options import (
    ClientMode,
    ExitZero,
    ExtendSelect,
    Ignore,
    Isolated,
    MaxBytes,
    MaxFrames,
    MaxRows,
    NodeModules,
    PerFileIgnores,
    Quiet,
    ReportWidth,
    Select,
    Sessions,
)


class Check(NamedTuple):
    """Check many captures against their expected findings; write reports for CI."""

    paths: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="PATH...",
            help="Capture files, folders (searched recursively, captures recognised by content) or globs; "
            "- reads the paths from standard input, one a line.",
        ),
    ] = None
    select: Select = []
    ignore: Ignore = []
    extend_select: ExtendSelect = []
    per_file_ignores: PerFileIgnores = []
    session: Sessions = []
    fail_on: Annotated[
        Optional[str],
        typer.Option(
            "--fail-on",
            metavar="SEVERITY",
            help="Fail on an unexpected finding of this severity or above: info, warning, error (default: error).",
        ),
    ] = None
    report: Annotated[
        List[str],
        typer.Option(
            "--report",
            "-r",
            metavar="FORMAT[:PATH]",
            help="terminal, json, jsonl, junit, sarif, github, markdown or statistics, written to PATH or standard "
            "output (repeatable).",
        ),
    ] = []
    jobs: Annotated[
        Optional[int], typer.Option("--jobs", "-j", min=0, help="Replay in N processes (0: one per CPU).")
    ] = None
    provider: Annotated[
        Optional[str], typer.Option("--provider", metavar="NAME", help="Force the provider for every capture.")
    ] = None
    container: Annotated[
        Optional[str], typer.Option("--container", metavar="FORMAT", help="Force the capture format for every capture.")
    ] = None
    config: Annotated[Optional[str], typer.Option("--config", help="Use this configuration file; do not search.")] = (
        None
    )
    isolated: Isolated = False
    respect_gitignore: Annotated[
        bool,
        typer.Option(
            "--respect-gitignore/--no-respect-gitignore",
            help="Skip what .gitignore files list when searching folders and globs (default: on).",
        ),
    ] = True
    client: Annotated[
        List[str],
        typer.Option(
            "--client",
            metavar="NAME",
            help="Also predict what this client would hand the tool, per call of every capture (repeatable, or all; "
            "`stream-doctor clients` lists them). Differences are findings SD801-SD809, in every report.",
        ),
    ] = []
    client_mode: ClientMode = "auto"
    node_modules: NodeModules = None
    update_expectations: Annotated[
        bool,
        typer.Option(
            "--update-expectations", help="Rewrite the .expect.toml of each failing capture to what it shows now."
        ),
    ] = False
    width: ReportWidth = None
    color: Annotated[Optional[bool], typer.Option("--color/--no-color", help="Force colour on or off.")] = None
    max_rows: MaxRows = 200
    max_bytes: MaxBytes = None
    max_frames: MaxFrames = None
    quiet: Quiet = False
    exit_zero: ExitZero = False
    output_file: Annotated[
        Optional[str],
        typer.Option(
            "--output-file",
            "-o",
            metavar="PATH",
            help="Write the report that would go to standard output to PATH instead.",
        ),
    ] = None
    statistics: Annotated[
        bool,
        typer.Option("--statistics", help="On standard output, how many findings of each code instead of the report."),
    ] = False

    def run(self) -> int:
        """Check the captures and write the reports; the exit code."""
        from stream_doctor.cli.check_run import run

        return run(self)
