"""``stream-doctor check``: many captures against their expected findings, reports for CI."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, List, Optional

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
from stream_doctor.cli.output import (
    EXIT_FINDINGS,
    EXIT_OK,
    fail,
    refuse_inputs,
    render_options,
    write_file,
    write_stdout,
)
from stream_doctor.cli.validate import choice, client_names, codes, file_ignores, paths_given, size_limits

if TYPE_CHECKING:
    from stream_doctor.report import CheckResult


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
    from stream_doctor.check import CheckError
    from stream_doctor.check.progress import progress
    from stream_doctor.check.run import execute, prepare
    from stream_doctor.findings import Severity
    from stream_doctor.options import CheckOptions

    targets = _report_targets(report, "statistics" if statistics else "terminal")
    severity = choice(fail_on, ("info", "warning", "error"), "--fail-on", "severity") if fail_on else None
    options = CheckOptions(
        paths=paths_given(paths or []),
        select=codes(select) or None,
        ignore=codes(ignore) or None,
        extend_select=codes(extend_select),
        per_file_ignores=tuple(file_ignores(per_file_ignores).items()),
        fail_on=Severity.parse(severity) if severity else None,
        provider=provider,
        container=container,
        jobs=jobs,
        config=config,
        isolated=isolated,
        respect_gitignore=respect_gitignore,
        update_expectations=update_expectations,
        keep_reports=any(name == "json" for name, _ in targets),
        clients=client_names(client),
        **size_limits(max_bytes, max_frames),
    )
    try:
        plan = prepare(options)
    except CheckError as error:
        fail(str(error))
    inputs = _inputs(plan)
    for path in [path for _, path in targets if path is not None] + ([output_file] if output_file else []):
        refuse_inputs(path, inputs)  # before the replays: a report must never replace a capture
    with progress(len(plan.tasks), enabled=sys.stdout.isatty() and sys.stderr.isatty()) as advance:
        try:
            result = execute(plan, advance)
        except CheckError as error:  # a sidecar that cannot be written
            fail(str(error))
    _write_reports(result, targets, width, color, max_rows, quiet, output_file, inputs)
    raise typer.Exit(EXIT_FINDINGS if result.failed and not exit_zero else EXIT_OK)


def _report_targets(values: list[str], default: str = "terminal") -> list[tuple[str, str | None]]:
    """``FORMAT[:PATH]`` options; standard output gets ``default`` (the terminal report) when no report goes there."""
    from stream_doctor.reporters import CHECK_FORMATS

    targets: list[tuple[str, str | None]] = []
    for value in values:
        name, _, path = value.partition(":")
        if name.lower() not in CHECK_FORMATS:
            fail(f"--report {value}: unknown format {name!r} (choose from {', '.join(CHECK_FORMATS)})")
        targets.append((name.lower(), path or None))
    on_stdout = [name for name, path in targets if path is None]
    if not on_stdout:
        targets.insert(0, (default, None))
    elif default != "terminal":  # --statistics: in place of the terminal report on standard output
        targets = [(default if (name, path) == ("terminal", None) else name, path) for name, path in targets]
    if os.environ.get("GITHUB_ACTIONS") == "true" and set(on_stdout) <= {"terminal", "statistics"}:
        if all(name != "github" for name, _ in targets):
            targets.append(("github", None))  # annotations on the run and the pull request, for free
    return targets


def _write_reports(
    result: CheckResult,
    targets: list[tuple[str, str | None]],
    width: int | None,
    color: bool | None,
    max_rows: int,
    quiet: bool = False,
    output_file: str | None = None,
    inputs: list[str] | None = None,
) -> None:
    import importlib

    from stream_doctor.reporters import CHECK_FORMATS, RenderOptions, rendered

    for name, path in targets:
        module = importlib.import_module(f"stream_doctor.reporters.{CHECK_FORMATS[name]}")
        # standard output gets the terminal's width and colours; a file, plain text
        if path is None and output_file is not None:
            path = output_file
        if path is None:
            options = render_options(width, color, max_rows=max_rows)
        else:
            options = RenderOptions(width=width or 100, max_rows=max_rows)
        written = rendered(module, result, options)  # the large machine reports, a piece at a time
        if path is None:
            if not quiet:
                write_stdout(written)
            continue
        write_file(path, written, f"cannot write the {name} report", inputs or ())


def _inputs(plan: Any) -> list[str]:
    """Every file a check run reads: captures, their sidecars, the configuration."""
    from stream_doctor.check.expectations import sidecar_path

    paths = [task.path for task in plan.tasks] + [sidecar_path(task.path) for task in plan.tasks]
    return paths + ([plan.config.path] if plan.config.path else [])
