"""``stream-doctor serve``: captures played back to the user's own application, which is judged on what
it sends back (the ``record`` extra: the server is the recorder's aiohttp stack)."""

from __future__ import annotations

from typing import List, Optional

import typer

from stream_doctor.cli.output import error_line, fail
from stream_doctor.serve.wire import MAX_REQUEST

#: The base-URL line each provider's SDK reads, and the dummy key line where the SDK insists on a key
#: (the server ignores keys): ``{url}`` is the server's base URL.
EXPORTS = {
    "anthropic": ("ANTHROPIC_BASE_URL={url}", "ANTHROPIC_API_KEY=stream-doctor-serve"),
    "openai": ("OPENAI_BASE_URL={url}/v1", "OPENAI_API_KEY=stream-doctor-serve"),
    "openai-responses": ("OPENAI_BASE_URL={url}/v1", "OPENAI_API_KEY=stream-doctor-serve"),
    "mistral": ("OPENAI_BASE_URL={url}/v1", "OPENAI_API_KEY=stream-doctor-serve"),
    "ollama": ("OLLAMA_HOST={url}",),
}
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def serve(
    captures: List[str] = typer.Argument(
        ..., metavar="CAPTURE...", help="The captures to serve, one conversation each."
    ),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port to listen on (0: any free port)."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on; anything but loopback is said on start."
    ),
    out: Optional[str] = typer.Option(
        None,
        "--out",
        metavar="DIR",
        help="Folder for the envelopes of what the application sent (default: a new temporary folder).",
    ),
    max_request: Optional[str] = typer.Option(
        None,
        "--max-request",
        metavar="SIZE",
        help=f"Refuse a request body larger than this (413, in the provider's error shape; default {MAX_REQUEST} bytes).",
    ),
    fail_on: str = typer.Option(
        "error",
        "--fail-on",
        metavar="SEVERITY",
        help="Exit 1 on stop when a verdict reached this severity: info, warning, error.",
    ),
) -> None:
    """Serve captures to your application, byte for byte, then judge what it sent back.

    The application's k-th request of a conversation gets the capture's k-th response; a request that
    differs in what the answer depends on (model, tools, a user message, results for calls never made)
    gets the provider's own 400 error instead. Every request is recorded as an envelope; on Ctrl-C or
    SIGTERM the conversation rules (SD6xx) judge what the application sent back, and the server says
    what it saw itself (a connection closed mid-stream, a follow-up that never came).
    """
    from stream_doctor.cli.record import _size
    from stream_doctor.cli.validate import choice
    from stream_doctor.findings import Severity

    severity = Severity.parse(choice(fail_on, ("info", "warning", "error"), "--fail-on", "severity"))
    limit = _size("--max-request", max_request) if max_request is not None else MAX_REQUEST
    try:
        from stream_doctor.serve.server import ServeConfig, run
    except ImportError as error:
        from stream_doctor.install import install_extra

        fail(f"stream-doctor serve needs the record extra ({error.name}): {install_extra('record')}")
    import tempfile

    from stream_doctor.options import Options
    from stream_doctor.serve.judge import Watching, judge, render, worst
    from stream_doctor.serve.load import ServeError, load_script

    try:
        scripts = tuple(load_script(path) for path in captures)
    except ServeError as error:
        fail(str(error))
    folder = out if out is not None else tempfile.mkdtemp(prefix="stream-doctor-serve-")
    watching = Watching(Options(), error_line, error_line)  # the application's findings, said as they come
    config = ServeConfig(scripts, folder, max_request=limit, log=error_line, listen=watching.queued)
    providers = sorted({script.provider for script in scripts})

    def ready(bound: int) -> None:
        url = f"http://{host if ':' not in host else f'[{host}]'}:{bound}"
        if host not in _LOOPBACK:
            error_line(
                f"stream-doctor serve: listening on {host}, not loopback: anyone who reaches this address is served"
            )
        error_line(
            f"stream-doctor serve: serving {len(scripts)} capture{'' if len(scripts) == 1 else 's'} ({', '.join(providers)}) "
            f"at {url}; the application's requests are recorded in {folder} (Ctrl-C to stop and judge)"
        )
        lines = dict.fromkeys(line.format(url=url) for p in providers for line in EXPORTS.get(p, ()))
        for line in lines or (f"# base URL: {url}",):
            typer.echo(f"export {line}" if not line.startswith("#") else line)

    try:
        served = run(config, host, port, ready)
    except OSError as error:
        import os

        fail(f"--host {host} --port {port}: {os.strerror(error.errno) if error.errno else error}")
    watching.drain()
    judged = judge(served)
    typer.echo(render(judged), nl=False)
    reached = worst(judged)
    if reached is not None and reached >= severity:
        raise typer.Exit(1)
