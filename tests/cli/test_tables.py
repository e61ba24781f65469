"""Every terminal table reads at 80 and 100 columns: no column of text squeezed to a word a line,
no row cut before its status, nothing lost that the wide table shows.

``rules`` and ``clients`` stack their text under a row's short fields where a text column would get
fewer than ``_text.MIN_TEXT`` cells; ``replay``'s call table abbreviates a long id or tool name in
the middle; ``check``'s table puts a long path on a line of its own above its row.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stream_doctor.cli import app
from stream_doctor.clients import PROFILES
from stream_doctor.reporters import RenderOptions, _text, clients_doc, rules_doc
from stream_doctor.reporters._page import abbreviate, cells
from stream_doctor.rules import RULES
from tests.conftest import ROOT

EVERY_RULE = list(RULES.values())
MCP_TOOL = "mcp__github_enterprise__create_pull_request_review_comment"  # 58 characters, as MCP clients name tools
LONG_ID = "toolu_01f3H9Mn3GSMpLjVNa749dnKxQ7rPzW2bYc8LmT5vNe"


def listing_cells(text: str) -> tuple[int, list[list[str]]]:
    """Where the last column of a listing begins, and the lines of each of its cells (a row begins
    where the columns before it hold something)."""
    lines = text.split("\n\n")[0].splitlines()  # the table, not the note after it
    start = max(gap.end() for gap in re.finditer("  +", lines[0]))
    rows: list[list[str]] = []
    for line in lines[1:]:
        if line[:start].strip() or not rows:
            rows.append([])
        rows[-1].append(line[start:].strip())
    return start, rows


def assert_readable(text: str, width: int, summaries: list[str]) -> None:
    start, rows = listing_cells(text)
    assert all(cells(line) <= width for line in text.splitlines()), text
    assert width - start >= _text.MIN_TEXT, f"the text column starts at {start} of {width}"
    for cell in rows:
        single = [len(line.split()) == 1 for line in cell]
        assert not any(a and b for a, b in zip(single, single[1:], strict=False)), cell  # no word-a-line run
    joined = [" ".join(" ".join(cell).split()) for cell in rows]
    for summary in summaries:  # each whole, in one cell: nothing cut with "…"
        assert any(" ".join(summary.split()) in cell for cell in joined), summary


@pytest.mark.parametrize("width", [80, 100])
def test_rules_fit(width: int) -> None:
    text = rules_doc.render(EVERY_RULE, RenderOptions(width=width))
    assert_readable(text, width, [rule.summary for rule in EVERY_RULE])


@pytest.mark.parametrize("width", [80, 100])
def test_clients_fit(width: int) -> None:
    text = clients_doc.render(tuple(PROFILES.values()), RenderOptions(width=width))
    assert_readable(
        text, width, [profile.summary for profile in PROFILES.values()] + [p.title for p in PROFILES.values()]
    )
    assert "2.12.0" in text and "[TypeScript]" in text


def test_wide_listings_keep_a_column_each() -> None:
    """The near miss: where there is room, the summary and the behaviour are columns of their own."""
    rules = rules_doc.render(EVERY_RULE, RenderOptions(width=120)).splitlines()[0].split()
    assert rules == ["code", "name", "severity", "summary"]
    clients = clients_doc.render(tuple(PROFILES.values()), RenderOptions(width=200)).splitlines()[0].split()
    assert clients == ["name", "models", "version", "reads", "behaviour"]


def test_the_listing_commands_take_a_width() -> None:
    runner = CliRunner()
    for command in (["rules"], ["clients"]):
        result = runner.invoke(app, [*command, "--width", "60"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        assert max(cells(line) for line in result.output.splitlines()) <= 60, command
    narrow, wide = (runner.invoke(app, ["explain", "SD201", "--width", w]).output for w in ("60", "200"))
    assert len(narrow.splitlines()) > len(wide.splitlines())  # its paragraphs wrap at 60 (examples stay as written)


def test_abbreviate_keeps_both_ends() -> None:
    assert abbreviate(MCP_TOOL, 30) == "mcp__github_en…_review_comment"
    assert abbreviate("get_weather", 11) == "get_weather"
    assert cells(abbreviate("天気を調べる道具の名前", 9)) <= 9


def _long_names(folder: Path) -> Path:
    text = (ROOT / "fixtures/anthropic/one_call.sse").read_text(encoding="utf-8")
    capture = folder / "one_call_with_long_names.sse"
    capture.write_text(
        text.replace('"get_weather"', f'"{MCP_TOOL}"').replace("toolu_01f3H9Mn3GSMpLjVNa749dnK", LONG_ID),
        encoding="utf-8",
    )
    return capture


def _call_row(output: str) -> tuple[str, str]:
    lines = output.splitlines()
    header = next(number for number, line in enumerate(lines) if line.startswith("#  "))
    return lines[header], lines[header + 1]


@pytest.mark.parametrize("width", [80, 100])
def test_replays_call_table_abbreviates_long_names_to_keep_the_status(tmp_path: Path, width: int) -> None:
    capture = _long_names(tmp_path)
    result = CliRunner().invoke(app, ["replay", str(capture), "--width", str(width)])
    header, row = _call_row(result.output)
    assert header.split() == ["#", "block", "id", "name", "frags", "bytes", "status"]
    assert row.endswith("complete") and len(row) <= width, row
    name = row.split()[3]
    assert name.startswith("mcp__github_en") and name.endswith("review_comment") and "…" in name


def test_replays_call_table_keeps_names_whole_where_they_fit(tmp_path: Path) -> None:
    capture = _long_names(tmp_path)
    result = CliRunner().invoke(app, ["replay", str(capture), "--width", "160"])
    assert _call_row(result.output)[1].split()[2:4] == [LONG_ID, MCP_TOOL]


def test_checks_table_puts_a_long_path_on_lines_of_its_own_in_the_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "team-recordings" / "2025-11-production-incident-replays" / "customer-support-agent"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "fixtures/anthropic/one_call.sse", folder / "one_call.sse")
    (tmp_path / "short.sse").write_bytes((ROOT / "fixtures/anthropic/one_call.sse").read_bytes())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", ".", "--width", "80"])
    table = result.output.split("\n\n")[0].splitlines()
    long_path = str((folder / "one_call.sse").relative_to(tmp_path))
    assert len(long_path) > 80
    assert all(len(line) <= 80 for line in table), table  # issue 36: the path had run past the width
    at = table.index(long_path.removesuffix("one_call.sse"))  # on lines of its own, cut after a "/" ...
    assert "".join(table[at : at + 2]) == long_path
    assert table[at + 2].split() == ["anthropic", "1", "·", "·", "·", "passed"]  # ... its row under it
    short = next(line for line in table if line.startswith("short.sse"))  # the near miss: a row as ever
    assert short.split() == ["short.sse", "anthropic", "1", "·", "·", "·", "passed"]
