"""The scan summary's tables, rendered without a cluster: a table cut at its first rows says how many
more there are and where they all are (issue 36: the terminal showed 30 of 70 rows, silently)."""

from __future__ import annotations

from collections import Counter

from stream_doctor.reporters import RenderOptions
from stream_doctor.scan.summary import Summary, render_json, render_markdown, render_terminal


def _summary(combinations: int, tools: int) -> Summary:
    summary = Summary()
    summary.per_code = Counter(
        {("SD301", "abandoned-call", "error", "anthropic", f"model-{n:02}"): 100 - n for n in range(combinations)}
    )
    summary.tools = Counter({f"tool_{n:02}": 50 - n for n in range(tools)})
    summary.severities = Counter({"error": sum(summary.per_code.values())})
    return summary


def test_a_cut_table_says_how_many_rows_are_not_shown_and_where_they_are() -> None:
    summary = _summary(combinations=70, tools=15)
    shown = render_terminal(summary, RenderOptions(width=120))
    assert shown.count("model-") == 30 and "model-29" in shown and "model-30" not in shown
    assert "… 40 more rows not shown (all of them: the JSON summary, --summary FILE.json)\n" in shown
    assert "… 5 more tools not shown (all of them: the JSON summary, --summary FILE.json)\n" in shown
    markdown = render_markdown(summary)
    assert markdown.count("| tool\\_") == 10 and "… 5 more tools not shown" in markdown
    assert render_json(summary).count('"model-') == 70  # where they all are


def test_a_table_that_fits_has_no_more_line() -> None:
    """The near miss: 30 combinations and 10 tools are every row; nothing is said to be hidden."""
    summary = _summary(combinations=30, tools=10)
    shown = render_terminal(summary, RenderOptions(width=120))
    assert shown.count("model-") == 30 and "more" not in shown
    assert "more" not in render_markdown(summary)


def test_the_more_line_names_the_json_summary_the_scan_writes() -> None:
    shown = render_terminal(_summary(combinations=31, tools=0), RenderOptions(width=120), "out/summary.json")
    assert "… 1 more row not shown (all of them: out/summary.json)\n" in shown
