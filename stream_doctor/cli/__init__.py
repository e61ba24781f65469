"""Command line: one module per command, each turning its options into an options object, running
the engine and picking the reporters and the exit code (``app`` is the typer application).

Heavy imports happen inside the commands, so ``stream-doctor --help`` stays fast.
"""

from __future__ import annotations

from stream_doctor.cli import check, clients, convert, record, replay, rules, scan
from stream_doctor.cli.app import app

__all__ = ["app", "main"]

# in the order ``--help`` lists them
for _command in (
    replay.replay,
    convert.convert,
    check.check,
    scan.scan,
    record.record,
    clients.clients,
    rules.rules,
    rules.explain,
):
    app.command()(_command)


def main() -> None:
    app()
