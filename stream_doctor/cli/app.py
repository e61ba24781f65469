"""The typer application every command module registers on, its global options and exit codes."""

from __future__ import annotations

import typer

from stream_doctor import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_COULD_NOT_RUN = 0, 1, 2

app = typer.Typer(
    name="stream-doctor",
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
