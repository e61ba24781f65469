"""``check --report statistics``: how many findings of each code across the captures, most frequent
first (``statistics.rows_page``), and the unreadable files the configuration accepts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stream_doctor.reporters import RenderOptions, _text
from stream_doctor.reporters.statistics import rows_page

if TYPE_CHECKING:
    from stream_doctor.check.result import CheckResult


def render(result: CheckResult, options: RenderOptions) -> str:
    page = rows_page(result.statistics, options)
    accepted = result.unreadable_accepted_words if result.statistics else None
    if accepted:
        page.print((accepted, "bold yellow"))
    return _text.finish(page.text(), options)
