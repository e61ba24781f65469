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
from stream_doctor.cli.validate import said

if TYPE_CHECKING:
    from stream_doctor.cli.replay import Replay
    from stream_doctor.values.report import Report


def run(options: Replay) -> int:
    """Replay the captures (one path, or several replayed as one conversation) and write the report; the
    exit code (0, or 1 for findings at ``--fail-on``)."""
    from stream_doctor.api import replay_given
    from stream_doctor.engine.stages import RunError
    from stream_doctor.values.options import Options

    captures = list(options.capture)
    output = options.output
    given = said(options)
    if output == "html" and options.output_file is None and not options.quiet and stdout_is_terminal():
        # a page's markup is no report to read on a terminal (issue 36); as gzip refuses to write
        # compressed data to one. Redirected, or with -o -, it is written where it was asked.
        fail(
            "--format html writes a web page, not text for the terminal: add -o report.html, or redirect (> report.html)"
        )
    own = Options(
        tools=options.tools,
        executed=tuple(options.executed),
        executions=options.executions,
        clients=tuple(options.client),
        client_mode=options.client_mode,
        node_modules=options.node_modules,
        timeline=options.timeline or output == "html",  # the HTML report draws every event on its timeline
    )
    config = False if options.isolated else options.config if options.config is not None else True
    try:
        report = replay_given(captures[0] if len(captures) == 1 else captures, given, own, config)
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
        from stream_doctor.values.report import UnknownCall

        try:
            report = report.select(options.call)
        except UnknownCall as error:
            fail(f"{report.path}: {error}")
    from stream_doctor.engine.redaction import redacted

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
