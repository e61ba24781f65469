"""The work of ``stream-doctor replay``: ``run`` takes the command's options (``cli/replay.py``'s
``Replay``) and returns the exit code. A bad option value is one line and exit 2 (``output.fail``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from stream_doctor.cli.output import (
    EXIT_FINDINGS,
    EXIT_OK,
    broken_pipe,
    emit,
    fail,
    internal_error,
    render_options,
    stdout_is_terminal,
)
from stream_doctor.cli.validate import choice, client_mode, file_ignores, size_limits

if TYPE_CHECKING:
    from stream_doctor.cli.replay import Replay
    from stream_doctor.report import Report


def run(options: Replay) -> int:
    """Replay the captures (one path, or several replayed as one conversation) and write the report; the
    exit code (0, or 1 for findings at ``--fail-on``)."""
    from stream_doctor.api import replay
    from stream_doctor.reporters import FORMATS
    from stream_doctor.stages import RunError

    captures = list(options.capture)
    limits = size_limits(options.max_bytes, options.max_frames)
    output = choice(options.output, FORMATS, "--format", "format")
    severities = ("info", "warning", "error")
    fail_on = choice(options.fail_on, severities, "--fail-on", "severity") if options.fail_on else None
    if output == "html" and options.output_file is None and not options.quiet and stdout_is_terminal():
        # a page's markup is no report to read on a terminal (issue 36); as gzip refuses to write
        # compressed data to one. Redirected, or with -o -, it is written where it was asked.
        fail(
            "--format html writes a web page, not text for the terminal: add -o report.html, or redirect (> report.html)"
        )
    mode = client_mode(options.client_mode)
    config = options.config if options.config is not None else True
    try:
        report = replay(
            captures[0] if len(captures) == 1 else captures,
            provider=options.provider,
            container=options.container,
            tools=options.tools,
            select=options.select,
            ignore=options.ignore,
            extend_select=options.extend_select,
            per_file_ignores=file_ignores(options.per_file_ignores),
            fail_on=fail_on,
            config=False if options.isolated else config,
            timeline=options.timeline or output == "html",  # the HTML report draws every event on its timeline
            executed=options.executed,
            executions_file=options.executions,
            clients=options.client,
            client_mode=mode,
            node_modules=options.node_modules,
            **limits,
        )
    except (RunError, ValueError) as error:
        fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        internal_error(error, ", ".join(captures))
    try:
        report = _write(report, options, output)
    except Exception as error:  # noqa: BLE001 - nor one in a reporter: exit 2 whatever --exit-zero says
        if broken_pipe(error):
            raise  # the reader went away (| head): not a bug, the caller exits quietly
        internal_error(error, ", ".join(captures))
    return EXIT_FINDINGS if report.failed and not options.exit_zero else EXIT_OK


def _write(report: Report, options: Replay, output: str) -> Report:
    """The report in ``output``'s format, written where it goes; the report (a selected call's) for the exit code."""
    from stream_doctor.reporters import REPLAY_FORMATS

    if options.call is not None:
        from stream_doctor.report import UnknownCall

        try:
            report = report.select(options.call)
        except UnknownCall as error:
            fail(f"{report.path}: {error}")
    from stream_doctor.redaction import redacted

    report = redacted(report)  # what is written never shows a secret; the rules saw the real values
    if output == "terminal" and options.output_file is None:
        rendering = render_options(options.width, options.color, timeline=options.timeline, max_rows=options.max_rows)
    else:
        from stream_doctor.reporters import RenderOptions

        # no console (rich) for machine output; a file gets plain text
        rendering = RenderOptions(width=options.width or 100, max_rows=options.max_rows, timeline=options.timeline)
    from stream_doctor.reporters import MissingExtra, rendered

    try:
        if options.statistics:
            from stream_doctor.reporters import statistics as counts

            written: str | Iterator[bytes] = (counts.render if output == "terminal" else counts.render_json)(
                report, rendering
            )
        else:  # a large machine report is written as it is made (see reporters/__init__.py)
            written = rendered(REPLAY_FORMATS[output], report, rendering)
    except MissingExtra as error:
        fail(str(error))
    emit(written, options.output_file, options.quiet, options.capture)
    return report
