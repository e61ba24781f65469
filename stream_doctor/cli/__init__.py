"""Command line: one module per command, each turning its options into an options object, running
the engine and picking the reporters and the exit code.

``app`` (the typer application, ``cli/typer_app.py``) is built on first use (PEP 562), so importing
this package costs nothing. Heavy imports happen inside the commands, so ``stream-doctor --help``
stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typer import Typer

    app: Typer

__all__ = ["app", "main"]


def main() -> None:
    """Run the typer application on ``sys.argv``. An exception no command caught is a bug of ours:
    one line and exit 2, whatever ``--exit-zero`` says (``output.internal_error``)."""
    from stream_doctor.cli.typer_app import app as typer_app

    try:
        typer_app()
    except Exception as error:  # noqa: BLE001 - click has already answered its own (usage) errors
        from stream_doctor.cli.output import internal_error

        internal_error(error)


def __getattr__(name: str) -> Any:
    if name == "app":
        from stream_doctor.cli.typer_app import app as typer_app

        return typer_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
