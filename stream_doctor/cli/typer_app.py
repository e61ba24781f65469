"""The typer application: every command, option, help text, completion and error message.

Importing it registers the commands (``cli/__init__.py`` does so on first use). The common
``replay`` and ``check`` invocations can run without it (``cli/fast.py``), from a table generated
from this application.
"""

from __future__ import annotations

import typer

from stream_doctor import __version__
from stream_doctor.cli import check, clients, convert, minimize, record, replay, rules, scan, usage

app = typer.Typer(
    name="stream-doctor",
    cls=usage.Group,  # usage errors as one line (cli/usage.py), not click's usage block
    help="Replay captured LLM streams and diagnose how their tool calls were reassembled.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stream-doctor {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Replay captured LLM streams and diagnose how their tool calls were reassembled."""


# in the order ``--help`` lists them
for _command in (
    replay.replay,
    convert.convert,
    minimize.minimize,
    minimize.fixture,
    check.check,
    scan.scan,
    record.record,
    clients.clients,
    rules.rules,
    rules.explain,
):
    app.command(cls=usage.Command)(_command)
