"""``stream-doctor scan`` behind the command line: progress, the summary in every form, the exit code."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from stream_doctor.scan import ScanError

if TYPE_CHECKING:
    from stream_doctor.reporters import RenderOptions
    from stream_doctor.values.command_options import ScanOptions

EXIT_INTERRUPTED = 130  # as a shell reports a command stopped by Ctrl-C


def run_scan(options: ScanOptions, render: RenderOptions) -> int:
    """Scan, print the summary, write the summary files; the exit code (ScanError: exit 2)."""
    from stream_doctor.scan.progress import progress
    from stream_doctor.scan.run import scan
    from stream_doctor.scan.summary import render_json, render_markdown, render_terminal
    from stream_doctor.util.atomic import OutputError, write

    try:
        with progress(sys.stderr.isatty()) as (start, advance):
            result = scan(options, lambda plan, where: start(plan.total, where), advance)
    except KeyboardInterrupt:
        _say("interrupted before any capture was scanned; the outputs were not changed")
        return EXIT_INTERRUPTED
    plan = result.plan
    written = [path for path in options.summaries if path.endswith(".json")]
    sys.stdout.write(render_terminal(result.summary, render, *written[:1]))  # where every row is, if written
    for path in options.summaries:
        text = render_json(result.summary) if path.endswith(".json") else render_markdown(result.summary)
        try:  # whole or not at all, never over an input (util/atomic.py)
            write(path, text, options.inputs)
        except OutputError as error:
            raise ScanError(f"{path}: cannot write the summary: {error}") from None
    rate = result.scanned / result.seconds if result.seconds > 0 else 0.0
    resumed = f" ({plan.already} kept from the earlier run)" if plan.already else ""
    _say(
        f"scanned {result.scanned} of {plan.total} captures{resumed} in {result.seconds:.2f} s ({rate:,.0f}/s) on "
        f"{result.where}; findings: {options.out}, status: {options.status_path}"
    )
    if plan.ignored:
        _say(
            f"--resume ignored {plan.ignored:,} row{'s' if plan.ignored != 1 else ''} of {options.status_path} "
            "(not a capture of the input, columns of the wrong types, or a capture's second row)"
        )
    if result.interrupted:
        _say(f"interrupted: {plan.total - result.scanned} captures not scanned; run again with --resume to finish")
        return EXIT_INTERRUPTED
    worst = result.summary.worst
    return 1 if options.fail_on is not None and worst is not None and worst >= options.fail_on else 0


def _say(line: str) -> None:
    from stream_doctor.reporters._neutral import one_line  # paths quoted escaped, as error_line does

    sys.stderr.write(f"stream-doctor: {one_line(line)}\n")
    sys.stderr.flush()
