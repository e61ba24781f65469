"""Rule documentation for ``stream-doctor rules`` (a table or JSON) and ``stream-doctor explain`` (one rule)."""

from __future__ import annotations

import textwrap
from typing import Sequence

import orjson
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from stream_doctor.reporters import RenderOptions, _text
from stream_doctor.rules.base import FAMILIES, Rule
from stream_doctor.rules.inputs import needs

#: Where the severity contract is written down (printed by ``rules`` and ``explain``).
SEVERITY_DOC = "docs/severity.md in the stream-doctor repository"


def render(rules: Sequence[Rule], options: RenderOptions) -> str:
    """The table of ``stream-doctor rules``: code, name, severity and summary, or, where the summary
    would get fewer than ``_text.MIN_TEXT`` cells, the summary under the rule's name."""
    console, buffer = _text.console(options)
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    families = [f"{rule.code[:3]}xx" for rule in rules]
    fixed = [[rule.code for rule in rules] + families, [r.name for r in rules], [r.severity.label for r in rules]]
    wide = _text.text_room(options, fixed, 4) >= _text.MIN_TEXT
    headers = ("code", "name", "severity", "summary") if wide else ("code", "name, severity, summary")
    for column in headers:
        table.add_column(column, no_wrap=column in ("code", "name", "severity"))
    family = None
    for rule in rules:
        if rule.code[:3] != family:
            family = rule.code[:3]
            heading = Text(FAMILIES[family], style="bold")
            table.add_row(Text(f"{family}xx", style="bold"), *(["", "", heading] if wide else [heading]))
        if wide:
            table.add_row(rule.code, rule.name, rule.severity.label, rule.summary)
        else:
            table.add_row(rule.code, f"{rule.name} ({rule.severity.label})\n{rule.summary}")
    console.print(table)
    console.print("\n`stream-doctor explain CODE` prints a rule's documentation.", highlight=False)
    console.print(f"What each severity promises: {SEVERITY_DOC}", highlight=False)
    return _text.finish(buffer.getvalue(), options)


def render_rule(rule: Rule, options: RenderOptions) -> str:
    """One rule's documentation (``stream-doctor explain``)."""
    console, buffer = _text.console(options)
    console.print(Text(f"{rule.code} {rule.name}", style="bold"))
    console.print(f"{rule.summary}.  Severity: {rule.severity.label}.  Family: {rule.family}.", highlight=False)
    console.print(f"What each severity promises: {SEVERITY_DOC}", highlight=False)
    sections = rule.sections()
    inputs = needs(rule)
    if inputs is not None:  # right after "What it checks": without these inputs the rule cannot run
        order = list(sections.items())
        sections = dict(order[:1] + [("What it needs", inputs)] + order[1:])
    for heading, body in sections.items():
        console.print()
        console.print(Text(heading, style="bold underline"))
        if heading == "What it needs":  # paragraphs, and commands kept as written
            for number, paragraph in enumerate(body.split("\n\n")):
                if number:
                    console.print()
                if paragraph.startswith("  "):
                    console.print(Text(paragraph), highlight=False, soft_wrap=True)
                else:
                    console.print(
                        Padding(Text(" ".join(paragraph.split())), (0, 0, 0, 2), expand=False), highlight=False
                    )
        elif heading == "Example":  # preformatted: keep every line as written
            console.print(Text(textwrap.indent(textwrap.dedent(body), "  ")), highlight=False, soft_wrap=True)
        else:
            for paragraph in textwrap.dedent(body).split("\n\n"):
                console.print(Padding(Text(" ".join(paragraph.split())), (0, 0, 0, 2), expand=False), highlight=False)
    return _text.finish(buffer.getvalue(), options)


def render_json(rules: Sequence[Rule], options: RenderOptions) -> str:
    data = [
        {
            "code": r.code,
            "name": r.name,
            "severity": r.severity.label,
            "family": r.family,
            "summary": r.summary,
            "doc": r.sections(),
            "needs": needs(r),
        }
        for r in rules
    ]
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
