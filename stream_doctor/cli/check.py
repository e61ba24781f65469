"""``stream-doctor check``: its options, declared once as the fields of ``Check`` (typer reads each
field's ``Annotated`` declaration, ``typer_app.command``); the work is ``check_run.run`` (``typer_app.WORK``).

No ``from __future__ import annotations``, as in ``cli/replay.py``: typer reads the annotations.
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
    Sessions,
    Severity,
    client_option,
    fail_on_option,
    output_file_option,
)
from stream_doctor.reporters import CHECK_FORMATS


def _reports(values: List[str]) -> List[str]:
    """The --report FORMAT[:PATH] values, each FORMAT checked against the reporters' registry as the command
    line is read (an unknown one: one line and exit 2) and given as the registry names it."""
    from stream_doctor.cli.validate import choice

    checked = []
    for value in values:
        name, colon, path = value.partition(":")
        checked.append(choice(name, tuple(CHECK_FORMATS), "--report", "format") + colon + path)
    return checked


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
    fail_on: Annotated[Optional[Severity], fail_on_option("on an unexpected finding of this severity or above")] = None
    report: Annotated[
        List[str],
        typer.Option(
            "--report",
            "-r",
            metavar="FORMAT[:PATH]",
            callback=_reports,
            help=f"A report in this format ({', '.join(CHECK_FORMATS)}), written to PATH or standard output "
            "(repeatable).",
        ),
    ] = []
    jobs: Annotated[
        Optional[int], typer.Option("--jobs", "-j", min=0, help="Replay in N processes (0: one per CPU).")
    ] = None
    provider: Provider = None
    container: Container = None
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
    client: Annotated[List[str], client_option(", per call of every capture")] = []
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
        Optional[str], output_file_option("Write the report that would go to standard output to PATH instead.")
    ] = None
    statistics: Annotated[
        bool,
        typer.Option("--statistics", help="On standard output, how many findings of each code instead of the report."),
    ] = False
