"""What the text reporters share: a page that renders into a string, and one look for a finding.

``replay``'s and ``check``'s reports render on a ``_page.Page`` (no rich on their path); the
rules and clients listings, which use rich's tables, get a rich Console from ``console()``.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Sequence

from stream_doctor.reporters import RenderOptions
from stream_doctor.reporters._neutral import defuse_commands, text
from stream_doctor.reporters._page import Page
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["MIN_TEXT", "console", "finding", "finish", "more", "more_words", "page", "text", "text_room"]

STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def page(options: RenderOptions) -> Page:
    """A page of the options' width, coloured when they name a colour system."""
    return Page(options.width, options.color_system is not None)


def console(options: RenderOptions) -> tuple[Console, io.StringIO]:
    """A rich Console of the options' width and colours that writes into the returned buffer."""
    from rich.console import Console

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


#: The fewest cells a listing (``rules``, ``clients``) gives a column of wrapped text: narrower, and a
#: summary falls apart into a word or two a line, so the listing stacks it under the row's short fields.
MIN_TEXT = 40


def text_room(options: RenderOptions, fixed: Sequence[Sequence[str]], columns: int) -> int:
    """The cells left on a line for the wrapped columns of a table of ``columns`` columns, once the
    columns that never wrap (``fixed``: each one's cells) and two cells between columns are taken."""
    from rich.cells import cell_len

    taken = sum(max((cell_len(cell) for cell in column), default=0) for column in fixed)
    return options.width - taken - 2 * (columns - 1)


def finish(rendered: str, options: RenderOptions) -> str:
    """The rendered text, with no line that GitHub Actions would run as a command.

    Plain text also loses the spaces at the end of lines, and, as a second guard behind the
    reporters' own neutralising of capture content, any control character left (plain text holds
    no escape sequence of ours). Lines are split on ``\n`` only: ``splitlines`` would also break
    on U+2028, NEL and form feed, making new lines out of capture content.
    """
    if not options.color_system and rendered:
        rendered = "\n".join(text(line.rstrip()) for line in rendered.rstrip("\n").split("\n")) + "\n"
    return defuse_commands(rendered)


def finding(finding: Finding, page: Page) -> None:
    """A finding as every text report shows it: severity, code, name, place; message, hint, related places."""
    page.print(
        (f"{finding.severity.label:<7}", STYLES[finding.severity]),
        (f" {finding.code} ", "bold"),
        text(finding.name),
        (f"  {text(str(finding.location))}", "dim"),
    )
    page.print(text(finding.message), indent=8)
    page.print(("hint: " + text(finding.hint), "italic"), indent=8)
    for related in finding.related:
        page.print((text(f"{related.label}: {related.location}"), "dim"), indent=8)


def counted(count: int, word: str, plural: str | None = None) -> str:
    """``1 event``, ``2 events``, ``20,000 errors``: a count with thousands separators and its noun."""
    return f"{count:,} {word if count == 1 else (plural or word + 's')}"


def more(page: Page, hidden: int, what: str, where: str) -> None:
    """The line that stands for the rows beyond ``max_rows``, saying where to find them all."""
    if hidden > 0:
        page.print((more_words(hidden, what, where), "dim"))


def more_words(hidden: int, what: str, where: str) -> str:
    """``… 40 more rows not shown (all of them: WHERE)``: what every table cut short ends with."""
    return f"… {hidden:,} more {what}{'s' if hidden != 1 else ''} not shown (all of them: {where})"
