"""``stream-doctor rules`` and ``stream-doctor explain``: the rules and their documentation."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from stream_doctor.cli.output import fail, render_options
from stream_doctor.cli.shared_options import LISTING_WIDTH_HELP, OutputFormat


def rules(
    output: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f", help="Output format."),
    width: Optional[int] = typer.Option(None, "--width", min=1, metavar="COLUMNS", help=LISTING_WIDTH_HELP),
) -> None:
    """List every rule: code, name, severity, summary."""
    from stream_doctor.reporters import rules_doc
    from stream_doctor.rules import RULES

    every = list(RULES.values())
    if output is OutputFormat.json:
        sys.stdout.write(rules_doc.render_json(every, render_options(None, None)))
    else:
        sys.stdout.write(rules_doc.render(every, render_options(width, None)))


def explain(
    code: str = typer.Argument(..., help="A rule code (SD201) or name (unparseable-arguments)."),
    width: Optional[int] = typer.Option(None, "--width", min=1, metavar="COLUMNS", help=LISTING_WIDTH_HELP),
) -> None:
    """Print one rule's documentation."""
    from stream_doctor.reporters import rules_doc
    from stream_doctor.rules import codes, lookup

    found = lookup(code)
    if found is None:
        fail(f"no rule {code!r}; `stream-doctor rules` lists them ({codes()[0]}…{codes()[-1]})")
    sys.stdout.write(rules_doc.render_rule(found, render_options(width, None)))
