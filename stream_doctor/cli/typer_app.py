"""The typer application: every command, option, help text, completion and error message.

A command is a function whose parameters are its options, or, where the work lives in its own
module (``replay``, ``check``: ``WORK``), a record (a ``NamedTuple``) whose fields are: ``command``
turns the record into the function typer reads, so each option is declared once, and the work gets
one value.
``COMMANDS`` names each command's module; the group imports a command's module and has typer
build it when the command line names it (``Commands``), so a replay builds the replay command
only, and ``--help`` every command, in this order.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import typer

from stream_doctor.cli import usage
from stream_doctor.util.registry import LazyRegistry
from stream_doctor.util.version import __version__

try:  # typer 0.28 carries its own copy of click (cli/usage.py)
    from typer._click import core
except ImportError:
    from click import core  # type: ignore[no-redef]

#: Each command's function (or record, for ``command``), in the order ``--help`` lists them.
COMMANDS: LazyRegistry[Any] = LazyRegistry(
    {
        "replay": "stream_doctor.cli.replay:Replay",
        "convert": "stream_doctor.cli.convert:convert",
        "minimize": "stream_doctor.cli.minimize:Minimize",
        "fixture": "stream_doctor.cli.minimize:Fixture",
        "check": "stream_doctor.cli.check:Check",
        "scan": "stream_doctor.cli.scan:Scan",
        "record": "stream_doctor.cli.record:Record",
        "serve": "stream_doctor.cli.serve:Serve",
        "clients": "stream_doctor.cli.clients:clients",
        "rules": "stream_doctor.cli.rules:rules",
        "explain": "stream_doctor.cli.rules:explain",
    }
)


#: The work of each command declared as a record: a function taking the record, returning the exit code.
#: Named here, not by the record, so the record's module never imports its work (which imports it).
WORK: LazyRegistry[Any] = LazyRegistry(
    {
        "replay": "stream_doctor.cli.replay_run:run",
        "minimize": "stream_doctor.cli.minimize_run:minimize",
        "fixture": "stream_doctor.cli.minimize_run:fixture",
        "check": "stream_doctor.cli.check_run:run",
        "record": "stream_doctor.cli.record_run:run",
        "scan": "stream_doctor.cli.scan_run:run",
        "serve": "stream_doctor.cli.serve_run:run",
    }
)


class Commands(usage.Group):
    """The ``stream-doctor`` group, whose commands typer builds when they are first looked up."""

    def list_commands(self, ctx: core.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: core.Context, cmd_name: str) -> core.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            declared = COMMANDS[cmd_name]
            one = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
            built = command(declared, cmd_name) if isinstance(declared, type) else declared
            one.command(cmd_name, cls=usage.Command)(built)
            self.commands[cmd_name] = typer.main.get_command(one)
        return super().get_command(ctx, cmd_name)


app = typer.Typer(
    name="stream-doctor",
    cls=Commands,  # usage errors as one line (cli/usage.py), not click's usage block
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


def command(record: type[Any], name: str) -> Callable[..., None]:
    """The typer command ``name`` for a ``NamedTuple`` ``record``: its help the class's docstring, its
    parameters the fields (with their ``Annotated`` typer declarations and defaults, in order); it builds
    the record and exits with the code of the command's work (``WORK``, imported then) run on it."""
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
        raise typer.Exit(WORK[name](record(**given)))

    invoke.__name__ = invoke.__qualname__ = record.__name__.lower()
    invoke.__doc__ = record.__doc__
    invoke.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    invoke.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return invoke
