"""The work of ``stream-doctor serve``: ``run`` takes the command's options (``cli/serve.py``'s ``Serve``),
serves the captures until the server is stopped (or runs the ``--matrix``) and returns the exit code
(1: ``--fail-on`` reached)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import typer

from stream_doctor.cli.output import error_line, fail
from stream_doctor.serve.wire import MAX_REQUEST

if TYPE_CHECKING:
    from stream_doctor.cli.serve import Serve
    from stream_doctor.record.live import Live
    from stream_doctor.serve.load import Script
    from stream_doctor.serve.server import ServeConfig

_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def command(context: typer.Context) -> list[str]:
    """The words after ``--`` (the application ``--matrix`` runs), which click hands on among the captures
    (``usage.Command`` keeps them)."""
    after = context.meta.get("after --")
    return list(after) if after else []


def run(given: Serve) -> int:
    """Serve until Ctrl-C or SIGTERM and judge what the application sent back, or run the matrix."""
    application = command(given.context)
    if given.matrix or application:
        from stream_doctor.cli.serve_matrix import matrix_run

        captures = given.captures[: len(given.captures) - len(application)]
        matrix_run(
            captures, application, given.vary, given.seed, given.out, given.timeout, given.format, given.output_file
        )
        return 0
    if len(given.vary) > 1:
        fail("--vary names one variant to serve (several run with --matrix -- COMMAND...)")
    try:
        from stream_doctor.serve.server import run as serve
    except ImportError as error:
        from stream_doctor.util.install import install_extra

        fail(f"stream-doctor serve needs the record extra ({error.name}): {install_extra('record')}")
    from stream_doctor.serve.judge import judge, render, watching, worst

    live = watching(error_line, error_line)  # the application's findings, said as they come
    config, scripts = _config(given, live)
    try:
        served = serve(config, given.host, given.port, _ready(given, scripts, config.out))
    except OSError as error:
        import os

        fail(f"--host {given.host} --port {given.port}: {os.strerror(error.errno) if error.errno else error}")
    live.drain()
    judged = judge(served, live.held)
    typer.echo(render(judged), nl=False)
    reached = worst(judged)
    return 1 if reached is not None and reached >= given.fail_on else 0


def _config(given: Serve, watching: Live) -> tuple[ServeConfig, tuple[Script, ...]]:
    """The server's configuration: the captures loaded, the folder for what the application sends, the
    variant played (``--vary``)."""
    import tempfile

    from stream_doctor.serve.load import ServeError, load_scripts
    from stream_doctor.serve.server import ServeConfig

    try:
        scripts = tuple(script for path in given.captures for script in load_scripts(path))
    except ServeError as error:
        fail(str(error))
    folder = given.out if given.out is not None else tempfile.mkdtemp(prefix="stream-doctor-serve-")
    limit = given.max_request if given.max_request is not None else MAX_REQUEST
    config = ServeConfig(
        scripts, folder, max_request=limit, idle_timeout=given.idle_timeout, log=error_line, listen=watching.queued
    )
    if given.vary:
        from stream_doctor.serve.matrix import played
        from stream_doctor.serve.variants import VARIANTS

        config.plan = played(VARIANTS[given.vary[0]], given.seed)
    return config, scripts


def _ready(given: Serve, scripts: tuple[Script, ...], folder: str) -> Callable[[int], None]:
    """What is said once the server listens: where, what it serves, and the environment to export."""
    from stream_doctor.serve.endpoints import environment_lines

    host = given.host
    providers = sorted({script.provider for script in scripts})
    # a capture of several conversations interleaved is served as that many: said when there is one
    split = f" holding {_counted(len(scripts), 'conversation')}" if len(scripts) > len(given.captures) else ""

    def ready(bound: int) -> None:
        url = f"http://{host if ':' not in host else f'[{host}]'}:{bound}"
        if host not in _LOOPBACK:
            error_line(
                f"stream-doctor serve: listening on {host}, not loopback: anyone who reaches this address is served"
            )
        error_line(
            f"stream-doctor serve: serving {_counted(len(given.captures), 'capture')}{split} ({', '.join(providers)}) "
            f"at {url}; the application's requests are recorded in {folder} (Ctrl-C to stop and judge)"
        )
        for line in environment_lines(url, providers) or (f"# base URL: {url}",):
            typer.echo(f"export {line}" if not line.startswith("#") else line)

    return ready


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
