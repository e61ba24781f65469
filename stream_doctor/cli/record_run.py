"""The work of ``stream-doctor record``: ``run`` takes the command's options (``cli/record.py``'s
``Record``), serves the proxy until it is stopped and returns the exit code (1: ``--fail-on`` reached)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from stream_doctor.cli.output import error_line, fail

if TYPE_CHECKING:
    from stream_doctor.cli.record import Record
    from stream_doctor.record.live import Live
    from stream_doctor.record.proxy import ProxyConfig


def run(options: Record) -> int:
    """Record through the proxy until Ctrl-C or SIGTERM, then judge what the live diagnosis saw."""
    host, _, port_text = options.listen.rpartition(":")
    if not host or not port_text.isdigit() or int(port_text) > 65535:
        fail(f"--listen {options.listen}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    from urllib.parse import urlsplit

    parts = urlsplit(options.upstream)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        fail(f"--upstream {options.upstream}: expected an http:// or https:// URL")
    try:
        from stream_doctor.record.proxy import run as serve
    except ImportError as error:
        from stream_doctor.util.install import install_extra

        fail(f"stream-doctor record needs the record extra ({error.name}): {install_extra('record')}")
    watching = _watching(options)
    try:
        serve(_proxy_config(options, watching), host.strip("[]"), int(port_text))
    except OSError as error:
        import os

        # asyncio's words repeat the address
        fail(f"--listen {options.listen}: {os.strerror(error.errno) if error.errno else error}")
    watching.drain()  # the findings of the last records, read on the live thread (bounded: live.DRAIN)
    return _verdict(options, watching)


def _watching(options: Record) -> Live:
    """The live diagnosis: replay's findings for each record as it is written, its options resolved as
    every command's are (``config/resolve.py``; ``record`` reads no configuration file)."""
    import sys

    from stream_doctor.config.resolve import resolve
    from stream_doctor.record.live import Live
    from stream_doctor.values.options import Given, Options

    own = Options(
        clients=tuple(options.client or ()),
        client_mode=options.client_mode,
        node_modules=options.node_modules,
    )
    live = options.live if options.live is not None else sys.stderr.isatty()
    log = error_line  # a request's path and a conversation's file name, quoted escaped
    return Live(resolve(Given(fail_on=options.fail_on), run=own), log if live else None, log)


def _proxy_config(options: Record, watching: Live) -> ProxyConfig:
    from stream_doctor.record.proxy import ProxyConfig

    return ProxyConfig(
        options.upstream,
        options.out,
        frozenset(name.strip().lower() for name in options.redact if name.strip()),
        log=error_line,
        max_request_body=options.max_request_body,
        max_event=options.max_event,
        max_capture=options.max_capture,
        max_connections=options.max_connections,
        header_timeout=options.header_timeout,
        idle_timeout=options.idle_timeout,
        listen=watching.queued,
    )


def _verdict(options: Record, watching: Live) -> int:
    """0, or 1 when ``--fail-on`` was reached (or a diagnosis failed); exit 2 when records went undiagnosed."""
    if options.fail_on is None:
        return 0
    severity = options.fail_on.label
    if watching.broken:
        typer.echo(
            f"stream-doctor record: the live diagnosis of {watching.broken} conversation"
            f"{'' if watching.broken == 1 else 's'} failed (an internal error, counted as an error for --fail-on "
            f"{severity}); replay the envelopes",
            err=True,
        )
        return 1
    if watching.failed:
        assert watching.worst is not None
        error_line(f"stream-doctor record: a finding reached --fail-on {severity} (worst: {watching.worst.label})")
        return 1
    if watching.undiagnosed:
        fail(
            f"--fail-on {severity}: {watching.undiagnosed} records were not diagnosed live (the diagnosis fell "
            "behind); replay the envelopes to judge them"
        )
    return 0
