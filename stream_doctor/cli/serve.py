"""``stream-doctor serve``: captures played back to the user's own application, which is judged on what
it sends back (the ``record`` extra: the server is the recorder's aiohttp stack)."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from stream_doctor.cli.options import Severity, fail_on_option, size
from stream_doctor.cli.output import error_line, fail
from stream_doctor.serve.wire import MATRIX_TIMEOUT, MAX_REQUEST

_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _variants_help() -> str:
    from stream_doctor.serve.variants import VARIANTS

    return "The variants: " + " ".join(f"{v.name} ({v.kind}): {v.description}" for v in VARIANTS)


_VARIANTS_HELP = _variants_help()


def _variants(names: List[str]) -> List[str]:
    """The --vary names, each checked against the registry as the command line is read."""
    from stream_doctor.cli.validate import choice
    from stream_doctor.serve.variants import variant_names

    return [choice(name, variant_names(), "--vary", "variant") for name in names]


def _command(context: typer.Context) -> List[str]:
    """The words after ``--`` (the application ``--matrix`` runs), which click hands on among the captures
    (``usage.Command`` keeps them)."""
    after = context.meta.get("after --")
    return list(after) if after else []


def serve(
    context: typer.Context,
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
    max_request: Optional[int] = typer.Option(
        None,
        "--max-request",
        metavar="SIZE",
        parser=size("--max-request"),
        help=f"Refuse a request body larger than this (413, in the provider's error shape; default {MAX_REQUEST} bytes).",
    ),
    fail_on: Annotated[Severity, fail_on_option("on stop when a verdict reached this severity")] = Severity.ERROR,
    vary: List[str] = typer.Option(
        [],
        "--vary",
        metavar="NAME",
        callback=_variants,
        help=f"Serve under this variant (with --matrix: repeatable, the variants to run; default every one). {_VARIANTS_HELP}",
    ),
    seed: int = typer.Option(0, "--seed", help="The variants' seed: the same seed, the same reads."),
    matrix: bool = typer.Option(
        False,
        "--matrix",
        help="Run the application given after -- once per variant against a fresh server, then print the table.",
    ),
    timeout: float = typer.Option(
        MATRIX_TIMEOUT, "--timeout", min=0.1, metavar="SECONDS", help="With --matrix: the time bound of each run."
    ),
    format: str = typer.Option(
        "text", "--format", metavar="FORMAT", help="With --matrix: the table as text, json, markdown or html."
    ),
    output_file: Optional[str] = typer.Option(
        None,
        "--output-file",
        "-o",
        metavar="PATH",
        help="With --matrix: write the table to PATH instead of standard output.",
    ),
) -> None:
    """Serve captures to your application, byte for byte, then judge what it sent back.

    The application's k-th request of a conversation gets the capture's k-th response; a request that
    differs in what the answer depends on (model, tools, a user message, results for calls never made)
    gets the provider's own 400 error instead. Every request is recorded as an envelope; on Ctrl-C or
    SIGTERM the conversation rules (SD6xx) judge what the application sent back, and the server says
    what it saw itself (a connection closed mid-stream, a follow-up that never came).
    """

    command = _command(context)
    if matrix or command:
        from stream_doctor.cli.serve_matrix import matrix_run

        matrix_run(captures[: len(captures) - len(command)], command, vary, seed, out, timeout, format, output_file)
        return
    if len(vary) > 1:
        fail("--vary names one variant to serve (several run with --matrix -- COMMAND...)")
    limit = max_request if max_request is not None else MAX_REQUEST
    try:
        from stream_doctor.serve.server import ServeConfig, run
    except ImportError as error:
        from stream_doctor.util.install import install_extra

        fail(f"stream-doctor serve needs the record extra ({error.name}): {install_extra('record')}")
    import tempfile

    from stream_doctor.serve.endpoints import environment_lines
    from stream_doctor.serve.judge import Watching, judge, render, worst
    from stream_doctor.serve.load import ServeError, load_script
    from stream_doctor.values.options import Options

    try:
        scripts = tuple(load_script(path) for path in captures)
    except ServeError as error:
        fail(str(error))
    folder = out if out is not None else tempfile.mkdtemp(prefix="stream-doctor-serve-")
    watching = Watching(Options(), error_line, error_line)  # the application's findings, said as they come
    config = ServeConfig(scripts, folder, max_request=limit, log=error_line, listen=watching.queued)
    if vary:
        from stream_doctor.serve.matrix import played
        from stream_doctor.serve.variants import BY_NAME

        config.plan = played(BY_NAME[vary[0]], seed)
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
        for line in environment_lines(url, providers) or (f"# base URL: {url}",):
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
    if reached is not None and reached >= fail_on:
        raise typer.Exit(1)
