"""``stream-doctor minimize`` and ``stream-doctor fixture``: a production capture cut down to its finding,
and that capture turned into a failing regression test (docs/minimize.md). Their options are the fields
of ``Minimize`` and ``Fixture`` (typer reads each field's ``Annotated`` declaration, ``typer_app.command``);
the work is ``minimize_run``'s, which builds one ``MinimizeOptions`` from either.

No ``from __future__ import annotations``, as in ``cli/replay.py``: typer reads the annotations.
"""

from typing import Annotated, NamedTuple, Optional

import typer

from stream_doctor.cli.shared_options import Container, Force, MaxBytes, MaxFrames, Provider

#: The CLI's bound: a capture of millions of frames must not keep a terminal (or a CI job) busy for hours.
DEFAULT_SECONDS = 300.0

# The options both commands take and no other does, declared once.
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


class Minimize(NamedTuple):
    """Cut a capture down to the smallest one on which the kept findings still fire.

    No new warning or error may appear; the capture keeps its format where it can (SSE, JSON Lines,
    the envelope, a JSON array), else it is written as an envelope; OUT's extension must say which."""

    capture: Annotated[
        str, typer.Argument(help="The capture to cut down (any format stream-doctor reads), or - for stdin.")
    ]
    keep: Keep
    output: Annotated[
        str, typer.Option("--output", "-o", metavar="PATH", help="Write the minimized capture here (- for stdout).")
    ]
    call: Call = None
    max_seconds: MaxSeconds = DEFAULT_SECONDS
    redact: Annotated[
        bool,
        typer.Option(
            "--redact", help="Replace user text, ids, argument values and secrets no kept finding depends on."
        ),
    ] = False
    provider: Provider = None
    container: Container = None
    max_bytes: MaxBytes = None
    max_frames: MaxFrames = None
    force: Force = False


class Fixture(NamedTuple):
    """Turn a capture into a minimized, redacted fixture and a pytest test that fails while it shows the bug.

    The test (beside the fixture) asserts it clean with the project's pytest plugin (assert_clean); with
    --serve, it runs your function against the capture served (stream_doctor_server) instead."""

    capture: Annotated[str, typer.Argument(help="The capture that shows the bug (any format stream-doctor reads).")]
    keep: Keep
    output: Annotated[
        str,
        typer.Option(
            "--output",
            "-o",
            metavar="PATH",
            help="The fixture to write (tests/fixtures/NAME.jsonl); its test beside it.",
        ),
    ]
    call: Call = None
    max_seconds: MaxSeconds = DEFAULT_SECONDS
    provider: Provider = None
    container: Container = None
    max_bytes: MaxBytes = None
    max_frames: MaxFrames = None
    force: Force = False
    serve: Annotated[
        Optional[str],
        typer.Option(
            "--serve",
            metavar="MODULE:FUNCTION",
            help="Write the capture as an envelope, credentials masked (as convert writes it), and a test that "
            "serves it to your FUNCTION (every SDK's base URL set to the server) and fails with the verdicts while "
            "the bug is there.",
        ),
    ] = None
