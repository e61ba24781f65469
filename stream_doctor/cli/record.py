"""``stream-doctor record``: a reverse proxy that writes one envelope per conversation and prints
findings as they happen (the ``record`` extra). Its options are the fields of ``Record`` (typer reads each
field's ``Annotated`` declaration, ``typer_app.command``); the work is ``record_run.run``.

No ``from __future__ import annotations``, as in ``cli/replay.py``: typer reads the annotations.
"""

from typing import Annotated, List, NamedTuple, Optional

import typer

from stream_doctor.cli.shared_options import (
    ClientMode,
    NodeModules,
    Severity,
    client_option,
    fail_on_option,
    idle_timeout_option,
    size,
)


class Record(NamedTuple):
    """Record every exchange through a reverse proxy, one envelope per conversation, findings live.

    Requests are forwarded unchanged and responses streamed back as they arrive; credentials
    (authorization, x-api-key, api-key, ?key= …) are never written. A request that sends back the
    previous response's assistant turn (its calls by id, or its text) continues that conversation's
    envelope; any other starts a new one. The findings are replay's, printed as they are found. SIZE is a byte count with an
    optional unit: 512KiB, 64MiB, 1.5GiB (KiB/MiB/GiB and a bare K/M/G are powers of two, KB/MB/GB of ten). An exchange that reaches a
    limit is recorded partial, and its log line says what was cut.
    """

    upstream: Annotated[
        str,
        typer.Option(
            "--upstream", metavar="URL", help="Where to forward every request, e.g. https://api.anthropic.com."
        ),
    ]
    out: Annotated[str, typer.Option("--out", metavar="DIR", help="Folder for the envelopes, one per conversation.")]
    listen: Annotated[
        str, typer.Option("--listen", metavar="HOST:PORT", help="Where to listen; point your client's base URL here.")
    ] = "127.0.0.1:8080"
    redact: Annotated[
        List[str],
        typer.Option(
            "--redact", metavar="HEADER", help="Also keep this header's value out of the envelopes (repeatable)."
        ),
    ] = []
    max_request_body: Annotated[
        int,
        typer.Option(
            "--max-request-body",
            metavar="SIZE",
            show_default="16MiB",
            parser=size("--max-request-body"),
            help="Keep at most this much of a request body in its envelope (all of it is forwarded).",
        ),
    ] = 16 << 20
    max_capture: Annotated[
        int,
        typer.Option(
            "--max-capture",
            metavar="SIZE",
            show_default="64MiB",
            parser=size("--max-capture"),
            help="Decode and record at most this much of one response (the rest is forwarded, counted, not recorded).",
        ),
    ] = 64 << 20
    max_event: Annotated[
        int,
        typer.Option(
            "--max-event",
            metavar="SIZE",
            show_default="8MiB",
            parser=size("--max-event"),
            help="Keep at most this much of one event, or of a response that is not a stream.",
        ),
    ] = 8 << 20
    max_connections: Annotated[
        int,
        typer.Option(
            "--max-connections",
            metavar="N",
            min=1,
            help="Serve at most this many connections at once; the next get a 503.",
        ),
    ] = 256
    header_timeout: Annotated[
        float,
        typer.Option(
            "--header-timeout",
            metavar="SECONDS",
            min=0.1,
            help="Close a connection that has not sent a whole request head in this time (also the keep-alive idle time).",
        ),
    ] = 10.0
    idle_timeout: Annotated[
        float,
        idle_timeout_option(
            "Cut an exchange when no byte moves (from the client, the upstream, or to the client) for this long."
        ),
    ] = 600.0
    live: Annotated[
        Optional[bool],
        typer.Option(
            "--live/--no-live",
            help="Print each finding on stderr as the event or request that proves it passes, and a summary per "
            "conversation on exit (default: on when stderr is a terminal).",
        ),
    ] = None
    client: Annotated[
        Optional[List[str]], client_option(" (a library installed is run over the envelope after each exchange)")
    ] = None
    client_mode: ClientMode = "auto"
    node_modules: NodeModules = None
    fail_on: Annotated[
        Optional[Severity], fail_on_option("on stop (Ctrl-C, SIGTERM) when a finding reached this severity", "never")
    ] = None
