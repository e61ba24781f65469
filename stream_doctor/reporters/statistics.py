"""``--statistics``: how many findings of each code, most frequent first (as ruff's ``--statistics``), for
a replay; ``check_statistics.py`` is check's report of the same rows (``rows_page``)."""

from __future__ import annotations

from typing import Sequence

import orjson

from stream_doctor.reporters import RenderOptions, _text
from stream_doctor.reporters._page import Page
from stream_doctor.values.finding_counts import Statistic
from stream_doctor.values.report import Report


def render(report: Report, options: RenderOptions) -> str:
    page = rows_page(report.statistics, options)
    read = report.requests_read
    # how a conversation's requests were read: each for what is new, or whole (``requests.History``);
    # said of a conversation only: a capture of one request has nothing to read it against
    if read is not None and read.extended + read.whole > 1:
        page.print(
            f"requests read for what is new: {read.extended:,}; read whole: {read.whole:,} ({read.edited:,} edited)"
        )
    return _text.finish(page.text(), options)


def rows_page(rows: Sequence[Statistic], options: RenderOptions) -> Page:
    """A page with one line per row and a total (or "No findings."), for the caller to add its notes to."""
    page = _text.page(options)
    if not rows:
        page.print(("No findings.", "green"))
        return page
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
    return page


def render_json(report: Report, options: RenderOptions) -> str:
    """``--statistics --format json``: the same rows as a JSON array."""
    return orjson.dumps([row.to_dict() for row in report.statistics], option=orjson.OPT_INDENT_2).decode() + "\n"
