"""``stream-doctor clients``: the client profiles ``replay --client`` takes."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from stream_doctor.cli.output import render_options
from stream_doctor.cli.shared_options import LISTING_WIDTH_HELP, OutputFormat


def clients(
    output: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f", help="Output format."),
    width: Optional[int] = typer.Option(None, "--width", min=1, metavar="COLUMNS", help=LISTING_WIDTH_HELP),
) -> None:
    """List the client profiles `replay --client` takes: what each models, its version and source."""
    from stream_doctor.clients import PROFILES
    from stream_doctor.reporters import clients_doc

    if output is OutputFormat.json:
        sys.stdout.write(clients_doc.render_json(tuple(PROFILES.values())))
    else:
        sys.stdout.write(clients_doc.render(tuple(PROFILES.values()), render_options(width, None)))
