"""The work of ``stream-doctor replay``, without a CLI framework: the typer command
(``cli/replay.py``) and the fast path (``cli/fast.py``) both call ``run`` with the parsed options
and exit with the code it returns. A bad option value is one line and exit 2 (``output.fail``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from stream_doctor.cli.output import (
    EXIT_FINDINGS,
    EXIT_OK,
    broken_pipe,
    emit,
    fail,
    internal_error,
    render_options,
)
from stream_doctor.cli.validate import choice, file_ignores, size_limits

if TYPE_CHECKING:
    from stream_doctor.report import Report


def run(
    *,
    capture: str | Sequence[str],
    call: str | None = None,
    timeline: bool = False,
    output: str = "terminal",
    container: str | None = None,
    provider: str | None = None,
    tools: str | None = None,
    executed: Sequence[str] = (),
    executions: str | None = None,
    client: Sequence[str] = (),
    fail_on: str | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
    per_file_ignores: Sequence[str] = (),
    width: int | None = None,
    color: bool | None = None,
    config: str | None = None,
    isolated: bool = False,
    quiet: bool = False,
    exit_zero: bool = False,
    output_file: str | None = None,
    max_rows: int = 200,
    max_bytes: str | None = None,
    max_frames: int | None = None,
    statistics: bool = False,
) -> int:
    """Replay ``capture`` (one path, or several replayed as one conversation) and write its report; the
    exit code (0, or 1 for findings at ``fail_on``)."""
    from stream_doctor.api import replay
    from stream_doctor.engine import RunError
    from stream_doctor.reporters import FORMATS

    captures = [capture] if isinstance(capture, str) else list(capture)
    limits = size_limits(max_bytes, max_frames)
    output = choice(output, FORMATS, "--format", "format")
    fail_on = choice(fail_on, ("info", "warning", "error"), "--fail-on", "severity") if fail_on else None
    try:
        report = replay(
            captures[0] if len(captures) == 1 else captures,
            provider=provider,
            container=container,
            tools=tools,
            select=select,
            ignore=ignore,
            extend_select=extend_select,
            per_file_ignores=file_ignores(per_file_ignores),
            fail_on=fail_on,
            config=False if isolated else (config if config is not None else True),
            timeline=timeline or output == "html",  # the HTML report draws every event on its timeline
            executed=executed,
            executions_file=executions,
            clients=client,
            **limits,
        )
    except (RunError, ValueError) as error:
        fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        internal_error(error, ", ".join(captures))
    try:
        report = _write(
            report, captures, call, output, output_file, width, color, timeline, quiet, max_rows, statistics
        )
    except Exception as error:  # noqa: BLE001 - nor one in a reporter: exit 2 whatever --exit-zero says
        if broken_pipe(error):
            raise  # the reader went away (| head): not a bug, the caller exits quietly
        internal_error(error, ", ".join(captures))
    return EXIT_FINDINGS if report.failed and not exit_zero else EXIT_OK


def _write(
    report: Report,
    captures: list[str],
    call: str | None,
    output: str,
    output_file: str | None,
    width: int | None,
    color: bool | None,
    timeline: bool,
    quiet: bool,
    max_rows: int,
    statistics: bool,
) -> Report:
    """The report in its format, written where it goes; the report (a selected call's) for the exit code."""
    import importlib

    from stream_doctor.reporters import REPLAY_FORMATS

    if call is not None:
        from stream_doctor.report import UnknownCall

        try:
            report = report.select(call)
        except UnknownCall as error:
            fail(f"{report.path}: {error}")
    from stream_doctor.redaction import redacted

    report = redacted(report)  # what is written never shows a secret; the rules saw the real values
    if output == "terminal" and output_file is None:
        options = render_options(width, color, timeline=timeline, max_rows=max_rows)
    else:
        from stream_doctor.reporters import RenderOptions

        # no console (rich) for machine output; a file gets plain text
        options = RenderOptions(width=width or 100, max_rows=max_rows, timeline=timeline)
    from stream_doctor.reporters import MissingExtra, rendered

    try:
        if statistics:
            from stream_doctor.reporters import statistics as counts

            written: str | Iterator[bytes] = (counts.render if output == "terminal" else counts.render_json)(
                report, options
            )
        else:  # a large machine report is written as it is made (see reporters/__init__.py)
            written = rendered(
                importlib.import_module(f"stream_doctor.reporters.{REPLAY_FORMATS[output]}"), report, options
            )
    except MissingExtra as error:
        fail(str(error))
    emit(written, output_file, quiet, captures)
    return report
