"""``stream-doctor record``: a reverse proxy that writes one envelope per exchange (the ``record`` extra)."""

from __future__ import annotations

from typing import List

import typer

from stream_doctor.cli.output import fail


def record(
    upstream: str = typer.Option(
        ..., "--upstream", metavar="URL", help="Where to forward every request, e.g. https://api.anthropic.com."
    ),
    listen: str = typer.Option(
        "127.0.0.1:8080", "--listen", metavar="HOST:PORT", help="Where to listen; point your client's base URL here."
    ),
    out: str = typer.Option(..., "--out", metavar="DIR", help="Folder for the envelopes, one per exchange."),
    redact: List[str] = typer.Option(
        [], "--redact", metavar="HEADER", help="Also keep this header's value out of the envelopes (repeatable)."
    ),
) -> None:
    """Record every exchange through a reverse proxy, one envelope each, for `stream-doctor replay`.

    Requests are forwarded unchanged and responses streamed back as they arrive; credentials
    (authorization, x-api-key, api-key, ?key= …) are never written.
    """
    from urllib.parse import urlsplit

    host, _, port_text = listen.rpartition(":")
    if not host or not port_text.isdigit() or int(port_text) > 65535:
        fail(f"--listen {listen}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        fail(f"--upstream {upstream}: expected an http:// or https:// URL")
    try:
        from stream_doctor.record.proxy import ProxyConfig, run
    except ImportError as error:
        from stream_doctor.install import install_extra

        fail(f"stream-doctor record needs the record extra ({error.name}): {install_extra('record')}")
    config = ProxyConfig(
        upstream,
        out,
        frozenset(name.strip().lower() for name in redact if name.strip()),
        log=lambda line: typer.echo(line, err=True),
    )
    try:
        run(config, host.strip("[]"), int(port_text))
    except OSError as error:
        fail(f"--listen {listen}: {error.strerror or error}")
