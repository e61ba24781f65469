"""What the text reporters share: a rich Console that renders into a string, and one look for a finding."""

from __future__ import annotations

import io

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from stream_doctor.findings import Finding, Severity
from stream_doctor.reporters import RenderOptions
from stream_doctor.reporters._neutral import defuse_commands, text

__all__ = ["console", "finding", "finish", "more", "text"]

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
    """The rendered text, with no line that GitHub Actions would run as a command.

    Plain text also loses the padding rich leaves at the end of lines, and, as a second guard
    behind the reporters' own neutralising of capture content, any control character left
    (plain text holds no escape sequence of ours). Lines are split on ``\n`` only: ``splitlines``
    would also break on U+2028, NEL and form feed, making new lines out of capture content.
    """
    rendered = buffer.getvalue()
    if not options.color_system and rendered:
        rendered = "\n".join(text(line.rstrip()) for line in rendered.rstrip("\n").split("\n")) + "\n"
    return defuse_commands(rendered)


def finding(finding: Finding, console: Console) -> None:
    """A finding as every text report shows it: severity, code, name, place; message, hint, related places."""
    head = Text()
    head.append(f"{finding.severity.label:<7}", style=STYLES[finding.severity])
    head.append(f" {finding.code} ", style="bold")
    head.append(text(finding.name))
    head.append(f"  {text(str(finding.location))}", style="dim")
    console.print(head)
    body = [Text(text(finding.message)), Text("hint: " + text(finding.hint), style="italic")]
    body += [Text(text(f"{r.label}: {r.location}"), style="dim") for r in finding.related]
    for line in body:
        console.print(Padding(line, (0, 0, 0, 8), expand=False))


def more(console: Console, hidden: int, what: str, where: str) -> None:
    """The line that stands for the rows beyond ``max_rows``, saying where to find them all."""
    if hidden > 0:
        plural = "s" if hidden != 1 else ""
        console.print(Text(f"… {hidden:,} more {what}{plural} not shown (all of them: {where})", style="dim"))
