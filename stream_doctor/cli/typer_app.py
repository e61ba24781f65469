"""The typer application: every command, option, help text, completion and error message.

Importing it registers the commands (``cli/__init__.py`` does so on first use). A command is a
function whose parameters are its options, or, where the work lives in its own module
(``replay``, ``check``), a record (a ``NamedTuple``) whose fields are: ``command`` turns the record
into the function typer reads, so each option is declared once, and the work gets one value.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

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


def command(record: type[Any]) -> Callable[..., None]:
    """The typer command for a ``NamedTuple`` ``record`` with a ``run() -> int`` method: named after
    the class, its help the class's docstring, its parameters the fields (with their ``Annotated``
    typer declarations and defaults, in order); it builds the record and exits with ``run()``'s code."""
    hints = typing.get_type_hints(record, include_extras=True)
    defaults = record._field_defaults
    parameters = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=hints[name],
            default=defaults.get(name, inspect.Parameter.empty),
        )
        for name in record._fields
    ]

    def invoke(**given: Any) -> None:
        raise typer.Exit(record(**given).run())

    invoke.__name__ = invoke.__qualname__ = record.__name__.lower()
    invoke.__doc__ = record.__doc__
    invoke.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    invoke.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return invoke


# in the order ``--help`` lists them
for _command in (
    command(replay.Replay),
    convert.convert,
    minimize.minimize,
    minimize.fixture,
    command(check.Check),
    scan.scan,
    record.record,
    clients.clients,
    rules.rules,
    rules.explain,
):
    app.command(cls=usage.Command)(_command)
