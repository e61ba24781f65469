"""The work of ``stream-doctor check``: ``run`` takes the command's options (``cli/check.py``'s
``Check``) and returns the exit code. A bad option value is one line and exit 2 (``output.fail``).
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
from stream_doctor.cli.validate import paths_given, said

if TYPE_CHECKING:
    from stream_doctor.check.result import CheckResult
    from stream_doctor.cli.check import Check


def run(given: Check) -> int:
    """Check the captures ``paths`` name and write the reports; the exit code (0, or 1 when one failed)."""
    from stream_doctor.check import CheckError
    from stream_doctor.check.progress import progress
    from stream_doctor.check.run import execute, prepare
    from stream_doctor.values.command_options import CheckOptions
    from stream_doctor.values.options import Options

    targets = _report_targets(given.report, "statistics" if given.statistics else "terminal")
    options = CheckOptions(
        paths=paths_given(given.paths or []),
        given=said(given),
        run=Options(
            clients=tuple(given.client),
            client_mode=given.client_mode,
            node_modules=given.node_modules,
        ),
        jobs=given.jobs,
        config=given.config,
        isolated=given.isolated,
        respect_gitignore=given.respect_gitignore,
        update_expectations=given.update_expectations,
        keep_reports=any(name == "json" for name, _ in targets),
        sessions=tuple(given.session),
    )
    try:
        plan = prepare(options)
    except CheckError as error:
        fail(str(error))
    inputs = _inputs(plan)
    for path in [path for _, path in targets if path is not None] + ([given.output_file] if given.output_file else []):
        refuse_inputs(path, inputs)  # before the replays: a report must never replace a capture
    with progress(len(plan.tasks), enabled=sys.stdout.isatty() and sys.stderr.isatty()) as advance:
        try:
            result = execute(plan, advance)
        except CheckError as error:  # a sidecar that cannot be written
            fail(str(error))
    _write_reports(result, targets, given, inputs)
    return EXIT_FINDINGS if result.failed and not given.exit_zero else EXIT_OK


def _report_targets(values: Sequence[str], default: str = "terminal") -> list[tuple[str, str | None]]:
    """``FORMAT[:PATH]`` options (their formats checked as the command line was read, ``check._reports``);
    standard output gets ``default`` (the terminal report) when no report goes there."""
    targets: list[tuple[str, str | None]] = []
    for value in values:
        name, _, path = value.partition(":")
        targets.append((name, path or None))
    on_stdout = [name for name, path in targets if path is None]
    if not on_stdout:
        targets.insert(0, (default, None))
    elif default != "terminal":  # --statistics: in place of the terminal report on standard output
        targets = [(default if (name, path) == ("terminal", None) else name, path) for name, path in targets]
    if os.environ.get("GITHUB_ACTIONS") == "true" and set(on_stdout) <= {"terminal", "statistics"}:
        if all(name != "github" for name, _ in targets):
            targets.append(("github", None))  # annotations on the run and the pull request, for free
    return targets


def _write_reports(result: CheckResult, targets: list[tuple[str, str | None]], given: Check, inputs: list[str]) -> None:
    from stream_doctor.reporters import CHECK_FORMATS, RenderOptions, rendered

    for name, path in targets:
        module = CHECK_FORMATS[name]
        # standard output gets the terminal's width and colours; a file, plain text
        if path is None and given.output_file is not None:
            path = given.output_file
        if path is None:
            options = render_options(given.width, given.color, max_rows=given.max_rows)
        else:
            options = RenderOptions(width=given.width or 100, max_rows=given.max_rows)
        written = rendered(module, result, options)  # the large machine reports, a piece at a time
        if path is None:
            if not given.quiet:
                write_stdout(written)
            continue
        write_file(path, written, f"cannot write the {name} report", inputs)


def _inputs(plan: Any) -> list[str]:
    """Every file a check run reads: captures, their sidecars, the configuration."""
    from stream_doctor.config.expectations import sidecar_path

    paths = [task.path for task in plan.tasks] + [sidecar_path(task.path) for task in plan.tasks]
    paths += [member for task in plan.tasks for member in task.members]  # a session's captures
    return paths + ([plan.config.path] if plan.config.path else [])
