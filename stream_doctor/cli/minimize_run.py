"""The work of ``stream-doctor minimize`` and ``stream-doctor fixture``: each takes its command's record
(``cli/minimize.py``'s ``Minimize``, ``Fixture``), minimizes through the library's ``minimize_given`` with
the one ``MinimizeOptions`` both build, writes what it found and returns the exit code. A bad option value
is one line and exit 2 (``output.fail``).
"""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator

from stream_doctor.cli.output import (
    EXIT_OK,
    error_line,
    fail,
    internal_error,
    refuse_existing,
    refuse_inputs,
    refuse_misnamed,
    says_container,
    write_file,
    write_stdout,
)

if TYPE_CHECKING:
    from stream_doctor.cli.minimize import Fixture, Minimize
    from stream_doctor.minimizer.run import Minimized, Progress
    from stream_doctor.values.command_options import MinimizeOptions


def minimize(options: Minimize) -> int:
    """Write the smallest capture on which the kept findings still fire, and a line saying what it took."""
    capture, output = options.capture, options.output
    if output != "-":
        refuse_existing(output, options.force)
    result = _run(capture, output, _wanted(options, options.redact))
    if output == "-":
        write_stdout([result.data])
    else:
        refuse_misnamed(output, result.container)
        write_file(output, result.data, "cannot write the minimized capture", [capture])
    error_line(_summary(capture, output, result))
    return EXIT_OK


def fixture(options: Fixture) -> int:
    """Write the minimized, redacted capture and the pytest module beside it (with --serve, the capture as a
    masked envelope and a test that serves it)."""
    from stream_doctor.minimizer.fixture import module_path, module_source, refusal

    capture, output = options.capture, options.output
    if output == "-":  # a test beside standard output has nothing to read
        fail("-o -: fixture writes a file and its test beside it; name the file (tests/fixtures/NAME.jsonl)")
    test = module_path(output)
    refuse_inputs(test, [capture])
    refused = None if options.force else refusal(output, test)
    if refused is not None:
        fail(refused)
    if options.serve is not None:
        _served_fixture(capture, options.keep, output, test, options.serve)
        return EXIT_OK
    result = _run(capture, output, _wanted(options, True))
    refuse_misnamed(output, result.container)
    write_file(output, result.data, "cannot write the fixture", [capture])
    write_file(test, module_source(output, capture, result), "cannot write the test", [capture])
    error_line(_summary(capture, output, result))
    error_line(f"wrote {test}: it fails while {output} shows {', '.join(sorted({f.code for f in result.kept}))}")
    return EXIT_OK


def _wanted(command: Minimize | Fixture, redact: bool) -> MinimizeOptions:
    """What minimize's or fixture's command line says, as the one record the library's ``minimize`` builds too."""
    from stream_doctor.cli.validate import codes
    from stream_doctor.values.command_options import MinimizeOptions
    from stream_doctor.values.options import Given

    said = Given(
        provider=command.provider,
        container=command.container,
        max_bytes=command.max_bytes,
        max_frames=command.max_frames,
    )
    return MinimizeOptions(
        keep=codes(command.keep), call=command.call, max_seconds=command.max_seconds, redact=redact, given=said
    )


def _run(capture: str, output: str, wanted: MinimizeOptions) -> Minimized:
    from stream_doctor.api import minimize_given
    from stream_doctor.engine.stages import RunError

    if output != "-":
        refuse_inputs(output, [capture])
    try:
        with _progress() as show:
            return minimize_given(capture, wanted, progress=show)
    except (RunError, ValueError) as error:  # MinimizeError is a ValueError
        fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        internal_error(error, capture)


@contextmanager
def _progress() -> Iterator[Callable[[Progress], None] | None]:
    """A live status line on standard error when it is a terminal (rich, imported only then); else none."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("minimizing") as status:

        def show(step: Progress) -> None:
            status.update(
                f"minimizing: {step.stage}: {step.size:,} bytes, {step.frames:,} frames, {step.checks} replays"
            )

        yield show


def _summary(capture: str, output: str, result: Minimized) -> str:
    """One line: sizes and frames before and after, the findings kept, the time."""
    kept = ", ".join(sorted({f.code for f in result.kept}))
    parts = [
        f"{capture} -> {output}: {result.size_before:,} -> {result.size_after:,} bytes",
        f"{result.frames_before:,} -> {result.frames_after:,} events",
        f"kept {kept}",
        f"{result.seconds:.1f} s, {result.checks} replays"
        + (f" ({result.windowed} of a window of turns)" if result.windowed else ""),
    ]
    if result.converted:
        parts.append("written as an envelope")
    elif not says_container(output, result.container):
        parts.append(f"written as {result.container}")
    if result.replaced:
        parts.append("replaced " + ", ".join(f"{n} {kind}" for kind, n in result.replaced.items()))
    if result.kept_values:
        parts.append("kept (a finding depends on them) " + ", ".join(f"{n} {k}" for k, n in result.kept_values.items()))
    if result.stopped_early:
        parts.append("stopped at --max-seconds: the smallest found so far")
    return "; ".join(parts)


_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")


def _served_fixture(capture: str, keep: str, output: str, test: str, target: str) -> None:
    """``fixture --serve``: the capture written as an envelope with its credentials masked (``convert``'s
    writer: the server answers the application's own requests with it, so nothing is cut) and a test that
    serves it to ``target``."""
    from stream_doctor.api import replay
    from stream_doctor.engine.convert import convert
    from stream_doctor.engine.stages import RunError
    from stream_doctor.minimizer.fixture import served_module_source
    from stream_doctor.serve.load import ServeError, load_script
    from stream_doctor.values.options import Options

    if not _TARGET.fullmatch(target):
        fail(f"--serve {target!r}: name the function to run as MODULE:FUNCTION (e.g. my_agent:run)")
    refuse_misnamed(output, "envelope")
    try:
        load_script(capture)
        data = convert(capture, Options())
    except (ServeError, RunError) as error:
        fail(f"--serve: {error}")
    codes = sorted({f.code for f in replay(capture).findings} & set(keep.split(",")))
    if not codes:
        fail(f"{capture}: shows none of {keep}; the served test would have no bug to fail on")
    write_file(output, data, "cannot write the fixture", [capture])
    write_file(test, served_module_source(output, capture, codes, target), "cannot write the test", [capture])
    error_line(
        f"wrote {output} ({capture} as an envelope, credentials masked) and {test}: it fails while {target} shows "
        f"{', '.join(codes)}"
    )
