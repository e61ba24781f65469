"""``stream-doctor serve``: captures played back to the user's own application, which is judged on what
it sends back (the ``record`` extra: the server is the recorder's aiohttp stack). Its options are the
fields of ``Serve`` (typer reads each field's ``Annotated`` declaration, ``typer_app.command``); the work
is ``serve_run.run``.

No ``from __future__ import annotations``, as in ``cli/replay.py``: typer reads the annotations.
"""

from typing import Annotated, Any, List, NamedTuple, Optional

import typer

from stream_doctor.cli.shared_options import (
    Severity,
    closed,
    fail_on_option,
    idle_timeout_option,
    output_file_option,
    size,
)
from stream_doctor.serve.wire import IDLE_TIMEOUT, MATRIX_TIMEOUT, MAX_REQUEST
from stream_doctor.util.registry import LazyRegistry

#: --format with --matrix: the function of serve/matrix_table.py that renders the table in each format (it
#: imports orjson and the matrix: imported when the table is printed, not to list the names)
TABLES: LazyRegistry[Any] = LazyRegistry(
    {name: f"stream_doctor.serve.matrix_table:{name}" for name in ("text", "json", "markdown", "html")}
)


def _variants_help() -> str:
    from stream_doctor.serve.variants import VARIANTS

    return "The variants: " + " ".join(f"{v.name} ({v.kind}): {v.description}" for v in VARIANTS.values())


_VARIANTS_HELP = _variants_help()


def _variant_names() -> tuple[str, ...]:
    from stream_doctor.serve.variants import VARIANTS

    return tuple(VARIANTS)


class Serve(NamedTuple):
    """Serve captures to your application, byte for byte, then judge what it sent back.

    The application's k-th request of a conversation gets the capture's k-th response; a request that
    differs in what the answer depends on (model, tools, a user message, results for calls never made)
    gets the provider's own 400 error instead. Every request is recorded as an envelope; on Ctrl-C or
    SIGTERM the conversation rules (SD6xx) judge what the application sent back, and the server says
    what it saw itself (a connection closed mid-stream, a follow-up that never came).
    """

    context: typer.Context  # the words after ``--`` (the application ``--matrix`` runs): ``serve_run.command``
    captures: Annotated[
        List[str], typer.Argument(metavar="CAPTURE...", help="The captures to serve, one conversation each.")
    ]
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: any free port).")] = 8765
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; anything but loopback is said on start.")
    ] = "127.0.0.1"
    out: Annotated[
        Optional[str],
        typer.Option(
            "--out",
            metavar="DIR",
            help="Folder for the envelopes of what the application sent (default: a new temporary folder).",
        ),
    ] = None
    max_request: Annotated[
        Optional[int],
        typer.Option(
            "--max-request",
            metavar="SIZE",
            parser=size("--max-request"),
            help=f"Refuse a request body larger than this (413, in the provider's error shape; default {MAX_REQUEST} bytes).",
        ),
    ] = None
    idle_timeout: Annotated[
        float,
        idle_timeout_option(
            "Drop an application that reads nothing of its answer, or sends nothing more of its request body, "
            "for this long (a verdict says so; 408 for the body)."
        ),
    ] = IDLE_TIMEOUT
    fail_on: Annotated[Severity, fail_on_option("on stop when a verdict reached this severity")] = Severity.ERROR
    vary: Annotated[
        List[str],
        typer.Option(
            "--vary",
            metavar="NAME",
            parser=closed("--vary", "variant", _variant_names),
            help=f"Serve under this variant (with --matrix: repeatable, the variants to run; default every one). {_VARIANTS_HELP}",
        ),
    ] = []
    seed: Annotated[int, typer.Option("--seed", help="The variants' seed: the same seed, the same reads.")] = 0
    matrix: Annotated[
        bool,
        typer.Option(
            "--matrix",
            help="Run the application given after -- once per variant against a fresh server, then print the table.",
        ),
    ] = False
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=0.1, metavar="SECONDS", help="With --matrix: the time bound of each run."),
    ] = MATRIX_TIMEOUT
    format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="FORMAT",
            parser=closed("--format", "format", lambda: tuple(TABLES)),
            help=f"With --matrix: the table's format: {', '.join(TABLES)}.",
        ),
    ] = "text"
    output_file: Annotated[
        Optional[str], output_file_option("With --matrix: write the table to PATH instead of standard output.")
    ] = None
