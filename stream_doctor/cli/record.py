"""``stream-doctor record``: a reverse proxy that writes one envelope per conversation and prints
findings as they happen (the ``record`` extra)."""

from __future__ import annotations

from typing import List, Optional

import typer

from stream_doctor.cli.options import ClientMode, NodeModules
from stream_doctor.cli.output import error_line, fail


def record(
    upstream: str = typer.Option(
        ..., "--upstream", metavar="URL", help="Where to forward every request, e.g. https://api.anthropic.com."
    ),
    listen: str = typer.Option(
        "127.0.0.1:8080", "--listen", metavar="HOST:PORT", help="Where to listen; point your client's base URL here."
    ),
    out: str = typer.Option(..., "--out", metavar="DIR", help="Folder for the envelopes, one per conversation."),
    redact: List[str] = typer.Option(
        [], "--redact", metavar="HEADER", help="Also keep this header's value out of the envelopes (repeatable)."
    ),
    max_request_body: str = typer.Option(
        "16MiB",
        "--max-request-body",
        metavar="SIZE",
        help="Keep at most this much of a request body in its envelope (all of it is forwarded).",
    ),
    max_capture: str = typer.Option(
        "64MiB",
        "--max-capture",
        metavar="SIZE",
        help="Decode and record at most this much of one response (the rest is forwarded, counted, not recorded).",
    ),
    max_event: str = typer.Option(
        "8MiB",
        "--max-event",
        metavar="SIZE",
        help="Keep at most this much of one event, or of a response that is not a stream.",
    ),
    max_connections: int = typer.Option(
        256,
        "--max-connections",
        metavar="N",
        min=1,
        help="Serve at most this many connections at once; the next get a 503.",
    ),
    header_timeout: float = typer.Option(
        10.0,
        "--header-timeout",
        metavar="SECONDS",
        min=0.1,
        help="Close a connection that has not sent a whole request head in this time (also the keep-alive idle time).",
    ),
    idle_timeout: float = typer.Option(
        600.0,
        "--idle-timeout",
        metavar="SECONDS",
        min=0.1,
        help="Cut an exchange when no byte moves (from the client, the upstream, or to the client) for this long.",
    ),
    live: Optional[bool] = typer.Option(
        None,
        "--live/--no-live",
        help="Print each finding on stderr as the event or request that proves it passes, and a summary per "
        "conversation on exit (default: on when stderr is a terminal).",
    ),
    client: List[str] = typer.Option(
        [],
        "--client",
        metavar="NAME",
        help="Also predict what this client would hand the tool (repeatable, or all; `stream-doctor clients` "
        "lists them): findings SD801-SD809. A library installed is run over the envelope after each exchange.",
    ),
    client_mode: ClientMode = "auto",
    node_modules: NodeModules = None,
    fail_on: Optional[str] = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Exit 1 on stop (Ctrl-C, SIGTERM) when a finding reached this severity: info, warning, error.",
    ),
) -> None:
    """Record every exchange through a reverse proxy, one envelope per conversation, findings live.

    Requests are forwarded unchanged and responses streamed back as they arrive; credentials
    (authorization, x-api-key, api-key, ?key= …) are never written. A request that sends back the
    previous response's assistant turn (its calls by id, or its text) continues that conversation's
    envelope; any other starts a new one. The findings are replay's, printed as they are found. SIZE is a byte count with an
    optional unit: 512KiB, 64MiB, 1GiB (KB/MB/GB are powers of ten). An exchange that reaches a
    limit is recorded partial, and its log line says what was cut.
    """
    from urllib.parse import urlsplit

    host, _, port_text = listen.rpartition(":")
    if not host or not port_text.isdigit() or int(port_text) > 65535:
        fail(f"--listen {listen}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        fail(f"--upstream {upstream}: expected an http:// or https:// URL")
    from stream_doctor.cli.validate import choice, client_names
    from stream_doctor.cli.validate import client_mode as mode_of

    severity = choice(fail_on, ("info", "warning", "error"), "--fail-on", "severity") if fail_on else None
    clients = client_names(client)
    try:
        from stream_doctor.record.proxy import ProxyConfig, run
    except ImportError as error:
        from stream_doctor.install import install_extra

        fail(f"stream-doctor record needs the record extra ({error.name}): {install_extra('record')}")
    import sys

    from stream_doctor.findings import Severity
    from stream_doctor.live import Live
    from stream_doctor.options import Options

    if live is None:
        live = sys.stderr.isatty()
    options = Options(
        fail_on=Severity.parse(severity) if severity else Severity.ERROR,
        clients=clients,
        client_mode=mode_of(client_mode),
        node_modules=node_modules,
    )
    log = error_line  # a request's path and a conversation's file name, quoted escaped
    watching = Live(options, log if live else None, log)
    config = ProxyConfig(
        upstream,
        out,
        frozenset(name.strip().lower() for name in redact if name.strip()),
        log=log,
        max_request_body=_size("--max-request-body", max_request_body),
        max_event=_size("--max-event", max_event),
        max_capture=_size("--max-capture", max_capture),
        max_connections=max_connections,
        header_timeout=header_timeout,
        idle_timeout=idle_timeout,
        listen=watching.queued,
    )
    try:
        run(config, host.strip("[]"), int(port_text))
    except OSError as error:
        import os

        fail(
            f"--listen {listen}: {os.strerror(error.errno) if error.errno else error}"
        )  # asyncio's words repeat the address
    watching.drain()  # the findings of the last records, read on the live thread (bounded: live.DRAIN)
    if severity is not None and watching.broken:
        typer.echo(
            f"stream-doctor record: the live diagnosis of {watching.broken} conversation"
            f"{'' if watching.broken == 1 else 's'} failed (an internal error, counted as an error for --fail-on "
            f"{severity}); replay the envelopes",
            err=True,
        )
        raise typer.Exit(1)
    if severity is not None and watching.failed:
        assert watching.worst is not None
        error_line(f"stream-doctor record: a finding reached --fail-on {severity} (worst: {watching.worst.label})")
        raise typer.Exit(1)
    if severity is not None and watching.undiagnosed:
        fail(
            f"--fail-on {severity}: {watching.undiagnosed} records were not diagnosed live (the diagnosis fell "
            "behind); replay the envelopes to judge them"
        )


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2}
_UNITS |= {"g": 1000**3, "gb": 1000**3, "gib": 1024**3}


def _size(option: str, text: str) -> int:
    """``64MiB``, ``512kb``, ``1048576``: a positive byte count."""
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS or float(match.group(1)) * _UNITS[unit] < 1:
        fail(f"{option} {text}: expected a size such as 65536, 512KiB or 64MiB")
    return int(float(match.group(1)) * _UNITS[unit])
