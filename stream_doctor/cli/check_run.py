"""The work of ``stream-doctor check``, without a CLI framework: the typer command (``cli/check.py``)
and the fast path (``cli/fast.py``) both call ``run`` with the parsed options and exit with the
code it returns. A bad option value is one line and exit 2 (``output.fail``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
    from stream_doctor.check.result import CheckResult


def run(
    *,
    paths: Sequence[str] | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
    per_file_ignores: Sequence[str] = (),
    fail_on: str | None = None,
    report: Sequence[str] = (),
    jobs: int | None = None,
    provider: str | None = None,
    container: str | None = None,
    config: str | None = None,
    isolated: bool = False,
    respect_gitignore: bool = True,
    client: Sequence[str] = (),
    update_expectations: bool = False,
    width: int | None = None,
    color: bool | None = None,
    max_rows: int = 200,
    max_bytes: str | None = None,
    max_frames: int | None = None,
    quiet: bool = False,
    exit_zero: bool = False,
    output_file: str | None = None,
    statistics: bool = False,
) -> int:
    """Check the captures ``paths`` name and write the reports; the exit code (0, or 1 when one failed)."""
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
    return EXIT_FINDINGS if result.failed and not exit_zero else EXIT_OK


def _report_targets(values: Sequence[str], default: str = "terminal") -> list[tuple[str, str | None]]:
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
    from stream_doctor.config.expectations import sidecar_path

    paths = [task.path for task in plan.tasks] + [sidecar_path(task.path) for task in plan.tasks]
    return paths + ([plan.config.path] if plan.config.path else [])
