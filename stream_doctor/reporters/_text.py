"""What the text reporters share: a rich Console that renders into a string, and one look for a finding."""

from __future__ import annotations

import io

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from stream_doctor.findings import Finding, Severity
from stream_doctor.reporters import RenderOptions

STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def console(options: RenderOptions) -> tuple[Console, io.StringIO]:
    """A Console of the options' width and colours that writes into the returned buffer."""
    buffer = io.StringIO()
    return (
        Console(
            file=buffer,
            width=options.width,
            color_system=options.color_system,  # type: ignore[arg-type]
            force_terminal=options.color_system is not None,
            no_color=options.color_system is None,
            highlight=False,
        ),
        buffer,
    )


def finish(buffer: io.StringIO, options: RenderOptions) -> str:
    """The rendered text; plain text loses the padding rich leaves at the end of lines."""
    text = buffer.getvalue()
    if options.color_system or not text:
        return text
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def finding(finding: Finding, console: Console) -> None:
    """A finding as every text report shows it: severity, code, name, place; message, hint, related places."""
    head = Text()
    head.append(f"{finding.severity.label:<7}", style=STYLES[finding.severity])
    head.append(f" {finding.code} ", style="bold")
    head.append(finding.name)
    head.append(f"  {finding.location}", style="dim")
    console.print(head)
    body = [Text(finding.message), Text("hint: " + finding.hint, style="italic")]
    body += [Text(f"{r.label}: {r.location}", style="dim") for r in finding.related]
    for text in body:
        console.print(Padding(text, (0, 0, 0, 8), expand=False))
