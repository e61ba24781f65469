"""What a scan found, counted as batches arrive: per code × provider × model, tools, shares of captures.

Kept as counters (never the findings themselves), so the summary of a billion-row scan is as
small as that of ten captures. Rendered as the reporters are (pure functions returning text): for the terminal, as
Markdown and as JSON (``schema_version``), deterministic: sorted by count, then by name. Models and
tool names come from the captures: every text output shows them neutralised (no control
characters, no markup, bounded length).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.scan.task import STATUSES
from stream_doctor.values.findings import Severity

if TYPE_CHECKING:
    from rich.console import Console

    from stream_doctor.reporters import RenderOptions

SCHEMA_VERSION = "scan-summary-v1"
TOP = 10  # rows of the tool table (three times as many per code, provider and model); the JSON has them all
_LONGEST = 80
#: The severities, highest first: the order of the summary's counts.
_HIGHEST_FIRST = sorted(Severity, reverse=True)
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


@dataclass
class Summary:
    statuses: Counter[str] = field(default_factory=Counter)
    severities: Counter[str] = field(default_factory=Counter)  # findings per severity label
    per_code: Counter[tuple[str, str, str, str, str]] = field(
        default_factory=Counter
    )  # code, name, severity, provider, model
    tools: Counter[str] = field(default_factory=Counter)  # findings naming each tool
    captures_with: Counter[str] = field(default_factory=Counter)  # code -> captures with at least one
    providers: Counter[str] = field(default_factory=Counter)  # replayed captures per provider
    unreadable: Counter[str] = field(default_factory=Counter)  # first words of each unreadable capture's error

    def add(self, findings: dict[str, list[Any]], status: dict[str, list[Any]]) -> None:
        for code, name, severity, provider, model, tool in zip(
            findings["code"], findings["name"], findings["severity"], findings["provider"], findings["model"],
            findings["tool"], strict=True,
        ):  # fmt: skip
            self.severities[severity] += 1
            self.per_code[(code, name, severity, provider or "-", model or "-")] += 1
            if tool is not None:
                self.tools[tool] += 1
        for state, codes, provider, error in zip(
            status["status"], status["codes"], status["provider"], status["error"], strict=True
        ):
            self.statuses[state] += 1
            self.captures_with.update(codes)
            if provider is not None:
                self.providers[provider] += 1
            if state == "unreadable" and error:
                self.unreadable[_reason(error)] += 1

    @property
    def captures(self) -> int:
        return sum(self.statuses.values())

    @property
    def worst(self) -> Severity | None:
        """The highest severity any finding has (None: no finding)."""
        return next((severity for severity in _HIGHEST_FIRST if self.severities[severity.label]), None)

    @property
    def diagnosed(self) -> int:
        """Captures the rules looked at or that could not be read: the base of every share."""
        return self.statuses["passed"] + self.statuses["findings"] + self.statuses["unreadable"]

    def to_dict(self) -> dict[str, Any]:
        base = self.diagnosed or 1
        return {
            "schema_version": SCHEMA_VERSION,
            "captures": {"total": self.captures, **{state: self.statuses[state] for state in STATUSES}},
            "findings": {
                "total": sum(self.severities.values()),
                **{severity.label: self.severities[severity.label] for severity in _HIGHEST_FIRST},
            },
            "providers": [{"provider": p, "captures": n} for p, n in _ranked(self.providers)],
            "codes": [
                {
                    "code": code,
                    "name": self._name(code),
                    "captures": count,
                    "share": round(count / base, 6),
                }
                for code, count in _ranked(self.captures_with)
            ],
            "by_code_provider_model": [
                {"code": c, "name": n, "severity": s, "provider": p, "model": m, "findings": count}
                for (c, n, s, p, m), count in _ranked(self.per_code)
            ],
            "tools": [{"tool": tool, "findings": count} for tool, count in _ranked(self.tools)],
            "unreadable": [{"reason": reason, "captures": count} for reason, count in _ranked(self.unreadable)],
        }

    def _name(self, code: str) -> str:
        return next((name for (c, name, *_), _count in self.per_code.items() if c == code), "")


def _ranked(counter: Counter[Any]) -> list[tuple[Any, int]]:
    return sorted(counter.items(), key=lambda item: (-item[1], item[0]))


def _reason(error: str) -> str:
    """An unreadable capture's error without what varies per capture (numbers, quoted text)."""
    reason = re.sub(r"'[^']*'|\"[^\"]*\"", "…", error)
    reason = re.sub(r"\d+", "N", reason)
    return reason[:_LONGEST]


def plain(text: str) -> str:
    """Capture-controlled text made safe to show: invisible and control characters escaped, length bounded."""
    text = _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text if len(text) <= _LONGEST else text[: _LONGEST - 1] + "…"


def render_json(summary: Summary) -> str:
    return orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"


def render_markdown(summary: Summary) -> str:
    data = summary.to_dict()
    captures, findings = data["captures"], data["findings"]
    lines = [
        "# stream-doctor scan",
        "",
        f"{captures['total']} captures: {captures['passed']} passed, {captures['findings']} with findings, "
        f"{captures['unreadable']} unreadable, {captures['skipped']} skipped (not captures)"
        + (f", {captures['lost']} lost (their worker kept dying)" if captures["lost"] else "")
        + f". {findings['total']} findings: {findings['error']} errors, {findings['warning']} warnings, "
        f"{findings['info']} info.",
        "",
    ]
    if data["codes"]:
        lines += [
            "## Share of captures with each problem",
            "",
            "| code | name | captures | share |",
            "|---|---|--:|--:|",
        ]
        lines += [f"| {c['code']} | {c['name']} | {c['captures']} | {c['share']:.2%} |" for c in data["codes"]]
        lines.append("")
    if data["by_code_provider_model"]:
        lines += ["## Findings per code, provider and model", ""]
        lines += ["| code | severity | provider | model | findings |", "|---|---|---|---|--:|"]
        lines += [
            f"| {r['code']} | {r['severity']} | {_md(r['provider'])} | {_md(r['model'])} | {r['findings']} |"
            for r in data["by_code_provider_model"]
        ]
        lines.append("")
    if data["tools"]:
        lines += ["## Tools most affected", "", "| tool | findings |", "|---|--:|"]
        lines += [f"| {_md(t['tool'])} | {t['findings']} |" for t in data["tools"][:TOP]]
        lines += _more_markdown(len(data["tools"]), "tool")
        lines.append("")
    if data["unreadable"]:
        lines += ["## Why captures were unreadable", "", "| reason | captures |", "|---|--:|"]
        lines += [f"| {_md(u['reason'])} | {u['captures']} |" for u in data["unreadable"][:TOP]]
        lines += _more_markdown(len(data["unreadable"]), "reason")
        lines.append("")
    return "\n".join(lines)


#: Where every row of a table cut at its first rows is (the JSON summary holds them all).
EVERY_ROW = "the JSON summary, --summary FILE.json"


def _more_markdown(rows: int, what: str) -> list[str]:
    from stream_doctor.reporters._text import more_words

    return ["", _md(more_words(rows - TOP, what, EVERY_ROW))] if rows > TOP else []


def _md(text: str) -> str:
    """A Markdown table cell showing ``text`` literally."""
    text = plain(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#~!])", r"\\\1", text)


def render_terminal(summary: Summary, options: RenderOptions, every_row: str = EVERY_ROW) -> str:
    """The summary as the terminal shows it (plain text unless ``options`` asks for colour);
    ``every_row``: where a table cut at its first rows is whole (the JSON summary the scan writes)."""
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=options.width,
        color_system=options.color_system,  # type: ignore[arg-type]
        force_terminal=options.color_system is not None,
        highlight=False,
    )

    data = summary.to_dict()
    captures, findings = data["captures"], data["findings"]
    console.print(
        Text(
            f"{captures['total']} captures: {captures['passed']} passed, {captures['findings']} with findings, "
            f"{captures['unreadable']} unreadable, {captures['skipped']} skipped"
            + (f", {captures['lost']} lost" if captures["lost"] else "")
            + f"; {findings['total']} findings ({findings['error']} errors, {findings['warning']} warnings, "
            f"{findings['info']} info)"
        )
    )
    if data["codes"]:
        table = Table(title="Share of captures with each problem", title_justify="left")
        for header, justify in (("code", "left"), ("name", "left"), ("captures", "right"), ("share", "right")):
            table.add_column(header, justify=justify)  # type: ignore[arg-type]
        for row in data["codes"]:
            table.add_row(row["code"], row["name"], str(row["captures"]), f"{row['share']:.1%}")
        console.print(table)
    if data["by_code_provider_model"]:
        table = Table(title="Findings per code, provider and model", title_justify="left")
        for header in ("code", "severity", "provider", "model", "findings"):
            table.add_column(header, justify="right" if header == "findings" else "left")
        for row in data["by_code_provider_model"][: TOP * 3]:
            table.add_row(
                row["code"], row["severity"], Text(plain(row["provider"])), Text(plain(row["model"])),
                str(row["findings"]),
            )  # fmt: skip
        console.print(table)
        _more_terminal(console, len(data["by_code_provider_model"]) - TOP * 3, "row", every_row)
    if data["tools"]:
        table = Table(title="Tools most affected", title_justify="left")
        table.add_column("tool")
        table.add_column("findings", justify="right")
        for row in data["tools"][:TOP]:
            table.add_row(Text(plain(row["tool"])), str(row["findings"]))
        console.print(table)
        _more_terminal(console, len(data["tools"]) - TOP, "tool", every_row)
    return buffer.getvalue()


def _more_terminal(console: Console, hidden: int, what: str, every_row: str) -> None:
    """The line under a table cut at its first rows (issue 36: 30 of 70 rows, and nothing said so)."""
    from rich.text import Text

    from stream_doctor.reporters._text import more_words

    if hidden > 0:
        console.print(Text(more_words(hidden, what, every_row), style="dim"))
