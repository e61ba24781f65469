"""Reports stay what they claim to be whatever a capture is named or holds (issue 22, round two).

A capture named with a code span and an HTML tag cannot put a tag into the Markdown step summary;
a 10 MB tool name is cut (with a marker) in the Markdown and HTML reports and kept whole in JSON.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stream_doctor.cli import app
from stream_doctor.reporters import markdown
from tests.conftest import ROOT

runner = CliRunner()
ONE_CALL = ROOT / "fixtures" / "check-tree" / "clean" / "one_call.sse"
TAG = "<img src=x onerror=alert(1)>"


def _rendered(summary: str) -> str:
    """The step summary as GitHub renders it: CommonMark with raw HTML on, and GFM tables."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(summary)


def _check(*args: str) -> str:
    result = runner.invoke(app, ["check", *args])
    assert result.exit_code in (0, 1), result.output
    return result.output


@pytest.mark.parametrize("ticks", ["`", "``", "```", "`` ` ``"])
def test_a_capture_named_with_a_code_span_and_a_tag_is_text_in_the_step_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ticks: str
) -> None:
    name = f"x{ticks} {TAG} {ticks}y.sse"
    shutil.copy(ONE_CALL, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    html = _rendered(_check(".", "--report", "markdown"))
    assert "<img" not in html  # the tag is shown, never made
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest.mark.parametrize("text", ["a", "`", "``x``", "x ` y", "` leading", "trailing `", "``` a ``` b `", "  ", "a|b"])
def test_a_code_span_shows_its_text_exactly(text: str) -> None:
    html = _rendered(f"{markdown._code(text)}\n")
    shown = html.removeprefix("<p><code>").removesuffix("</code></p>\n")
    assert shown == text.replace("|", "\\|").replace("&", "&amp;").replace("<", "&lt;")


def test_a_near_miss_plain_name_keeps_its_single_backquote_fence() -> None:
    assert markdown._code("bugs/one_call.sse") == "`bugs/one_call.sse`"


def test_a_huge_tool_name_is_cut_in_markdown_and_html_and_whole_in_json(tmp_path: Path) -> None:
    long_name = "t" * 2_000_000
    capture = tmp_path / "long_name.sse"
    abandoned = ROOT / "fixtures" / "check-tree" / "bugs" / "abandoned_at_max_tokens.sse"
    capture.write_text(abandoned.read_text(encoding="utf-8").replace('"create_file"', f'"{long_name}"'))
    summary = _check(str(capture), "--report", "markdown")  # SD301's message names the call's tool
    assert len(summary) < 10_000 and "more characters; --report json has them all" in summary
    page = tmp_path / "page.html"
    runner.invoke(app, ["replay", str(capture), "--format", "html", "-o", str(page)])
    html = page.read_text(encoding="utf-8")
    assert len(html) < 500_000 and "more characters; the JSON report has them all" in html
    data = json.loads(_check(str(capture), "--report", "json"))
    names = [c["name"] for c in data["captures"][0]["report"]["calls"]]
    assert names == [long_name]


def test_a_short_tool_name_is_whole_in_markdown_and_html(tmp_path: Path) -> None:
    abandoned = ROOT / "fixtures" / "check-tree" / "bugs" / "abandoned_at_max_tokens.sse"
    assert "create\\_file (toolu" in _check(str(abandoned), "--report", "markdown")
    page = tmp_path / "page.html"
    runner.invoke(app, ["replay", str(abandoned), "--format", "html", "-o", str(page)])
    assert "more characters" not in page.read_text(encoding="utf-8")


def test_sarif_uris_are_relative_to_the_repository_root_or_absolute_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.check.test_reporters import _validate_sarif

    bug = ROOT / "fixtures" / "check-tree" / "bugs" / "abandoned_at_max_tokens.sse"
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    (repository / "work").mkdir()
    (tmp_path / "outside").mkdir()
    shutil.copy(bug, repository / "work" / "inside.sse")
    shutil.copy(bug, tmp_path / "outside" / "far away.sse")
    monkeypatch.chdir(repository / "work")
    run = _validate_sarif(_check("inside.sse", "../../outside/far away.sse", "--report", "sarif"))["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repository.as_uri() + "/"}}
    places = {json.dumps(r["locations"][0]["physicalLocation"]["artifactLocation"]) for r in run["results"]}
    assert places == {
        json.dumps({"uri": "work/inside.sse", "uriBaseId": "%SRCROOT%"}),
        json.dumps({"uri": (tmp_path / "outside" / "far away.sse").as_uri()}),
    }


def _many_executions(tmp_path: Path, extra: int) -> Path:
    """The empty-input bug's envelope with ``extra`` more execute records of its call."""
    source = ROOT / "fixtures" / "check-tree" / "bugs" / "empty_input_bug.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    execute = next(line for line in lines if '"sd":"execute"' in line)
    capture = tmp_path / "many_executions.jsonl"
    capture.write_text("\n".join([*lines, *[execute] * extra]) + "\n", encoding="utf-8")
    return capture


def test_an_execution_list_is_listed_up_to_a_count_and_counted_beyond(tmp_path: Path) -> None:
    from stream_doctor.values.report import LISTED_EXECUTIONS

    capture = _many_executions(tmp_path, LISTED_EXECUTIONS + 500)
    replayed = runner.invoke(app, ["replay", str(capture), "--format", "json"])
    data = json.loads(replayed.output)
    assert len(data["executions"]) == LISTED_EXECUTIONS
    assert data["execution_checks"]["executions"] == LISTED_EXECUTIONS + 501
    assert data["execution_checks"]["omitted"] == 501
    checked = json.loads(_check(str(capture), "--report", "json"))
    (embedded,) = [c["report"] for c in checked["captures"]]
    assert len(embedded["executions"]) == LISTED_EXECUTIONS and embedded["execution_checks"]["omitted"] == 501
    page = tmp_path / "page.html"
    runner.invoke(app, ["replay", str(capture), "--format", "html", "-o", str(page)])
    html = page.read_text(encoding="utf-8")
    assert html.count('<pre class="ran-input">') == LISTED_EXECUTIONS
    assert "the application ran it 501 more times" in html


def test_an_execution_list_at_the_count_is_listed_whole(tmp_path: Path) -> None:
    from stream_doctor.values.report import LISTED_EXECUTIONS

    capture = _many_executions(tmp_path, LISTED_EXECUTIONS - 1)
    data = json.loads(runner.invoke(app, ["replay", str(capture), "--format", "json"]).output)
    assert len(data["executions"]) == data["execution_checks"]["executions"] == LISTED_EXECUTIONS
    assert "omitted" not in data["execution_checks"]
