"""``--statistics``: how many findings of each code, most frequent first (as ruff's ``--statistics``)."""

from __future__ import annotations

import orjson
from rich.text import Text

from stream_doctor.report import CheckResult, Report
from stream_doctor.reporters import RenderOptions, _text


def render(report: Report | CheckResult, options: RenderOptions) -> str:
    console, buffer = _text.console(options)
    rows = report.statistics
    if not rows:
        console.print("No findings.", style="green")
        return _text.finish(buffer, options)
    count_width = max(len(f"{row.count:,}") for row in rows)
    code_width = max(len(row.code) for row in rows)
    for row in rows:
        line = Text(f"{row.count:>{count_width},}  ")
        line.append(row.code.ljust(code_width), style="bold")
        line.append("  ")
        line.append(f"{row.severity.label:<7}", style=_text.STYLES[row.severity])
        line.append(f"  {row.name}")
        console.print(line, no_wrap=True, overflow="ellipsis")
    total = sum(row.count for row in rows)
    console.print(f"{total:,} finding{'s' if total != 1 else ''} of {len(rows)} code{'s' if len(rows) != 1 else ''}")
    return _text.finish(buffer, options)


def render_json(report: Report | CheckResult, options: RenderOptions) -> str:
    """``--statistics --format json``: the same rows as a JSON array."""
    return orjson.dumps([row.to_dict() for row in report.statistics], option=orjson.OPT_INDENT_2).decode() + "\n"
