"""``--statistics``: how many findings of each code, most frequent first (as ruff's ``--statistics``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from stream_doctor.report import Report
from stream_doctor.reporters import RenderOptions, _text
from stream_doctor.reporters._page import Page

if TYPE_CHECKING:
    from stream_doctor.check.result import CheckResult


def render(report: Report | CheckResult, options: RenderOptions) -> str:
    page = _text.page(options)
    rows = report.statistics
    if not rows:
        page.print(("No findings.", "green"))
        _requests_read(report, page)
        return _text.finish(page.text(), options)
    count_width = max(len(f"{row.count:,}") for row in rows)
    code_width = max(len(row.code) for row in rows)
    for row in rows:
        page.print(
            f"{row.count:>{count_width},}  ",
            (row.code.ljust(code_width), "bold"),
            "  ",
            (f"{row.severity.label:<7}", _text.STYLES[row.severity]),
            f"  {row.name}",
            overflow="ellipsis",
        )
    total = sum(row.count for row in rows)
    codes = len({row.code for row in rows})
    page.print(f"{total:,} finding{'s' if total != 1 else ''} of {codes} code{'s' if codes != 1 else ''}")
    accepted = report.unreadable_accepted_words if not isinstance(report, Report) else None
    if accepted:
        page.print((accepted, "bold yellow"))
    _requests_read(report, page)
    return _text.finish(page.text(), options)


def _requests_read(report: Report | CheckResult, page: Page) -> None:
    """How a conversation's requests were read: each for what is new, or whole (``requests.History``).
    Said of a conversation only: a capture of one request has nothing to read it against."""
    read = report.requests_read if isinstance(report, Report) else None
    if read is not None and read.extended + read.whole > 1:
        page.print(
            f"requests read for what is new: {read.extended:,}; read whole: {read.whole:,} ({read.edited:,} edited)"
        )


def render_json(report: Report | CheckResult, options: RenderOptions) -> str:
    """``--statistics --format json``: the same rows as a JSON array."""
    return orjson.dumps([row.to_dict() for row in report.statistics], option=orjson.OPT_INDENT_2).decode() + "\n"
