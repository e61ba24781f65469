"""``stream-doctor convert``: any capture rewritten as an envelope that replays to the same findings."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from stream_doctor.cli.output import fail, internal_error, refuse_existing, refuse_inputs, refuse_misnamed, write_file
from stream_doctor.cli.shared_options import Container, Force, MaxBytes, MaxFrames, Provider


def convert(
    capture: List[str] = typer.Argument(
        ...,
        help="Any capture stream-doctor reads (a HAR file, a cassette …), or - for stdin. Several files of one "
        "session, or a folder of them, become one envelope of several turns, in the order they were recorded.",
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the envelope here (default: stdout)."),
    container: Container = None,
    provider: Provider = None,
    max_bytes: MaxBytes = None,
    max_frames: MaxFrames = None,
    force: Force = False,
) -> None:
    """Rewrite a capture as a stream-doctor envelope (JSONL) that replays to the same findings.

    Several captures of one session (or a folder of them) become one envelope of several turns."""
    from stream_doctor.config.resolve import resolve
    from stream_doctor.engine.convert import convert_many
    from stream_doctor.engine.stages import RunError
    from stream_doctor.values.options import Given

    to_file = output is not None and output != "-"
    if output is not None and to_file:
        refuse_inputs(output, capture)
        refuse_existing(output, force)
        refuse_misnamed(output, "envelope")
    try:
        given = Given(container=container, provider=provider, max_bytes=max_bytes, max_frames=max_frames)
        data = convert_many(capture, resolve(given))
    except RunError as error:
        fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        internal_error(error, ", ".join(capture))
    if output is None or not to_file:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    write_file(output, data, "cannot write the envelope", capture)
