"""``stream-doctor minimize`` and ``stream-doctor fixture``: a production capture cut down to its finding,
and that capture turned into a failing regression test (docs/minimize.md)."""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Callable, Iterator, Optional

import typer

from stream_doctor.cli.output import (
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
from stream_doctor.cli.shared_options import Container, Force, MaxBytes, MaxFrames, Provider

if TYPE_CHECKING:
    from stream_doctor.minimizer.run import Minimized, Progress
    from stream_doctor.values.options import MinimizeOptions

#: The CLI's bound: a capture of millions of frames must not keep a terminal (or a CI job) busy for hours.
DEFAULT_SECONDS = 300.0

# The options minimize and fixture share, declared once; what they say is one ``MinimizeOptions`` (``_wanted``).
Keep = Annotated[
    str,
    typer.Option(
        "--keep",
        "-k",
        metavar="CODE[,CODE]",
        help="The finding codes to keep, comma-separated (SD102 or SD102,SD301): each must fire in CAPTURE.",
    ),
]
Call = Annotated[
    Optional[str],
    typer.Option(
        "--call", metavar="ID|N", help="Keep the findings on this call: its id or its number in replay's table."
    ),
]
MaxSeconds = Annotated[
    float,
    typer.Option(
        "--max-seconds",
        min=0,
        metavar="N",
        help="Stop after N seconds and write the smallest capture found so far (default 300; 0: redact only).",
    ),
]


def minimize(
    capture: Annotated[
        str, typer.Argument(help="The capture to cut down (any format stream-doctor reads), or - for stdin.")
    ],
    keep: Keep,
    output: Annotated[
        str, typer.Option("--output", "-o", metavar="PATH", help="Write the minimized capture here (- for stdout).")
    ],
    call: Call = None,
    max_seconds: MaxSeconds = DEFAULT_SECONDS,
    redact: bool = typer.Option(
        False, "--redact", help="Replace user text, ids, argument values and secrets no kept finding depends on."
    ),
    provider: Provider = None,
    container: Container = None,
    max_bytes: MaxBytes = None,
    max_frames: MaxFrames = None,
    force: Force = False,
) -> None:
    """Cut a capture down to the smallest one on which the kept findings still fire.

    No new warning or error may appear; the capture keeps its format where it can (SSE, JSON Lines,
    the envelope, a JSON array), else it is written as an envelope; OUT's extension must say which."""
    if output != "-":
        refuse_existing(output, force)
    wanted = _wanted(keep, call, max_seconds, redact, provider, container, max_bytes, max_frames)
    result = _run(capture, output, wanted)
    if output == "-":
        write_stdout([result.data])
    else:
        refuse_misnamed(output, result.container)
        write_file(output, result.data, "cannot write the minimized capture", [capture])
    error_line(_summary(capture, output, result))


def fixture(
    capture: Annotated[str, typer.Argument(help="The capture that shows the bug (any format stream-doctor reads).")],
    keep: Keep,
    output: Annotated[
        str,
        typer.Option(
            "--output",
            "-o",
            metavar="PATH",
            help="The fixture to write (tests/fixtures/NAME.jsonl); its test beside it.",
        ),
    ],
    call: Call = None,
    max_seconds: MaxSeconds = DEFAULT_SECONDS,
    provider: Provider = None,
    container: Container = None,
    max_bytes: MaxBytes = None,
    max_frames: MaxFrames = None,
    force: Force = False,
    serve: Optional[str] = typer.Option(
        None,
        "--serve",
        metavar="MODULE:FUNCTION",
        help="Write the capture as an envelope, credentials masked (as convert writes it), and a test that "
        "serves it to your FUNCTION (every SDK's base URL set to the server) and fails with the verdicts while the "
        "bug is there.",
    ),
) -> None:
    """Turn a capture into a minimized, redacted fixture and a pytest test that fails while it shows the bug.

    The test (beside the fixture) asserts it clean with the project's pytest plugin (assert_clean); with
    --serve, it runs your function against the capture served (stream_doctor_server) instead."""
    from stream_doctor.minimizer.fixture import module_path, module_source, refusal

    if output == "-":  # a test beside standard output has nothing to read
        fail("-o -: fixture writes a file and its test beside it; name the file (tests/fixtures/NAME.jsonl)")
    test = module_path(output)
    refuse_inputs(test, [capture])
    refused = None if force else refusal(output, test)
    if refused is not None:
        fail(refused)
    if serve is not None:
        _served_fixture(capture, keep, output, test, serve)
        return
    result = _run(capture, output, _wanted(keep, call, max_seconds, True, provider, container, max_bytes, max_frames))
    refuse_misnamed(output, result.container)
    write_file(output, result.data, "cannot write the fixture", [capture])
    write_file(test, module_source(output, capture, result), "cannot write the test", [capture])
    error_line(_summary(capture, output, result))
    error_line(f"wrote {test}: it fails while {output} shows {', '.join(sorted({f.code for f in result.kept}))}")


def _wanted(
    keep: str,
    call: Optional[str],
    max_seconds: float,
    redact: bool,
    provider: Optional[str],
    container: Optional[str],
    max_bytes: Optional[int],
    max_frames: Optional[int],
) -> MinimizeOptions:
    """What minimize's or fixture's command line says, as the one record the library's ``minimize`` builds too."""
    from stream_doctor.cli.validate import codes
    from stream_doctor.values.options import Given, MinimizeOptions

    said = Given(provider=provider, container=container, max_bytes=max_bytes, max_frames=max_frames)
    return MinimizeOptions(keep=codes(keep), call=call, max_seconds=max_seconds, redact=redact, given=said)


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
