"""The HTML report in a real headless browser: Debian's Chromium driven by Playwright.

The page is loaded from a file; the tests assert it loads without a console error or any
request beyond the file itself, shows every call and finding, and that clicking a call shows its
reassembled input beside what ran. At 1,400 and 800 px wide (900 px high), for a single stream, an
envelope with executions, a call of 5,000 fragments, a conversation with SD608 and a generated
capture of 40 calls and 150 findings, the page never scrolls sideways, never breaks an identifier
inside a word, every mark stays inside its lane, no mark lies on another, and the first screen
shows the summary by code and the worst call opened. The filter narrows the findings by code,
severity and call, and without script the page still shows the summary, the worst call and each
code's first findings. Screenshots go under pytest's tmp dir, or to the folder named by
STREAM_DOCTOR_SCREENSHOTS (``STREAM_DOCTOR_SCREENSHOTS=docs/screenshots`` remakes the ones the docs
show). Without chromium or playwright the browser tests skip with what to install, except under
CI=true, where a missing browser fails.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchmarks.captures import write_calls
from stream_doctor.cli import app
from stream_doctor.engine.pipeline import replay
from stream_doctor.reporters import RenderOptions, html, json_report, terminal
from stream_doctor.util.install import REPOSITORY
from stream_doctor.values.findings import Severity
from stream_doctor.values.options import Options
from stream_doctor.values.report import CallExtra
from tests import hostile_capture
from tests.browser import chromium

EXECUTED = "fixtures/anthropic/parallel_calls_executed.jsonl"
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium("the HTML report is tested in a real browser") as launched:
        yield launched


def _open(browser: Any, page_file: Path, width: int = 1280, height: int = 900) -> tuple[Any, list[str]]:
    """The page, and every problem seen while loading it: console errors, page errors, requests."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(15_000)
    problems: list[str] = []
    page.on(
        "console",
        lambda message: problems.append(f"console {message.type}: {message.text}") if message.type == "error" else None,
    )
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "request",
        lambda request: None if request.url == page_file.as_uri() else problems.append(f"request {request.url}"),
    )
    page.goto(page_file.as_uri())
    return page, problems


def _with_client_predictions(report: Any) -> Any:
    """What the client profiles attach (shape of stream_doctor/clients/extras.py), on every call."""
    for number, call in enumerate(report.calls, 1):
        at = call.fragment_positions[0] if call.fragment_positions else call.started
        data = {"naive-first-parse": {"agrees": False, "handoffs": [{"event": at.number, "runs": True}]}}
        lines = (f"naive-first-parse: runs it at line {at.line} (event {at.number}); differs: runs it early",)
        report = report.with_extra(number, CallExtra("clients", data, lines))
    return report


def test_the_page_shows_every_call_and_finding_and_a_click_shows_the_input(browser: Any, tmp_path: Path) -> None:
    report = _with_client_predictions(replay(EXECUTED, Options(keep_events=True)))
    assert len(report.calls) >= 2 and report.findings
    page_file = tmp_path / "report.html"
    page_file.write_text(html.render(report, RenderOptions()), encoding="utf-8")
    page, problems = _open(browser, page_file)
    try:
        assert page.locator("tr.call-row").count() == len(report.calls)
        assert page.locator(".call-lane").count() == len(report.calls)
        assert page.locator(".finding").count() == len(report.findings)
        for finding in report.findings:
            assert page.locator(".finding", has_text=finding.code).count() >= 1
            assert page.locator(f'.findings-lane .mark:text-is("{finding.code}")').count() >= 1
        assert page.locator(".mark.client-differs").count() == len(report.calls)  # each client prediction placed
        assert page.locator(".mark.done").count() == sum(1 for call in report.calls if call.ended is not None)
        assert page.locator(".mark.executed").count() == len(report.stream.executions)
        opened = any(verdict.tone != "ok" for verdict in report.verdicts)  # the worst call, opened
        assert page.locator(".detail.shown").count() == int(opened)
        for number, call in enumerate(report.calls, 1):
            page.locator(f'tr.call-row[data-call="{number}"]').click()
            detail = page.locator(f"#call-{number}")
            assert detail.is_visible()
            shown = json.loads(detail.locator("pre.input").inner_text())
            assert shown == call.arguments
            assert "naive-first-parse" in detail.inner_text()
            assert page.locator(".detail.shown").count() == 1
        page.locator('.call-lane[data-call="1"]').click()  # the timeline selects too
        assert page.locator("#call-1").is_visible()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    finally:
        page.close()
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert problems == []


def test_capture_content_is_text_never_markup_or_script(browser: Any, tmp_path: Path) -> None:
    capture = hostile_capture.write(tmp_path / "hostile.sse")
    text = capture.read_text(encoding="utf-8")
    injected = '<img src=x onerror=\\"window.pwned=1\\"></script><script>window.pwned=2</script>'
    capture.write_text(text.replace("search", "search" + injected), encoding="utf-8")
    page_file = tmp_path / "hostile.html"
    result = CliRunner().invoke(app, ["replay", str(capture), "--format", "html", "-o", str(page_file)])
    assert result.exit_code in (0, 1), result.output
    source = page_file.read_text(encoding="utf-8")
    assert RAW_CONTROL.search(source) is None
    assert "<script>window.pwned" not in source and "&lt;script&gt;window.pwned=2" in source
    page, problems = _open(browser, page_file)
    try:
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("img").count() == 0
        page.locator('tr.call-row[data-call="1"]').click()
        assert "<script>window.pwned=2</script>" in page.locator("#call-1").inner_text()
        assert "\\x1b[2J" in page.locator("#call-1").inner_text()  # escapes shown, as in the terminal
    finally:
        page.close()
    assert problems == []


def test_without_jinja2_the_html_format_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_jinja2(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "jinja2" or name.startswith("jinja2."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jinja2)
    result = CliRunner().invoke(app, ["replay", EXECUTED, "--format", "html"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        'stream-doctor: error: the HTML report needs jinja2: pip install -e ".[html]" in a clone of stream-doctor, '
        f'or pip install "stream-doctor[html] @ git+{REPOSITORY}"'
    ]


def test_fixtures_of_every_kind_render_a_page_with_every_call_and_finding() -> None:
    from tests.test_golden import CAPTURES

    # every provider folder and every conversation (turns, interactions), without paying for all 170
    chosen = {name.split("/")[0]: name for name in CAPTURES} | {n: n for n in CAPTURES if n.startswith("conv")}
    for name in sorted(chosen.values()):
        report = replay(f"fixtures/{name}", Options(keep_events=True))
        page = html.render(report, RenderOptions())
        assert page.count('<tr class="call-row"') == len(report.calls), name
        assert page.count('<div class="finding ') == len(report.findings), name
        assert page.count('<section class="timeline"') == max(1, len(report.turns)), name
        assert RAW_CONTROL.search(page) is None, name


# -- the bug at a glance --------------------------------------------------------------------------

WIDTHS = {1400: 900, 800: 900}  # viewport width: height (the first screen)
CONVERSATION = "fixtures/conversations/anthropic_echo_empty_input.yaml"
ENVELOPE = "fixtures/anthropic/empty_input_bug.jsonl"

# Every mark inside its lane's box, and no glyph or code on another one of the same row.
_LAYOUT = """() => {
  const problems = [];
  for (const track of document.querySelectorAll('.track')) {
    const box = track.getBoundingClientRect();
    const marks = [...track.querySelectorAll('.mark')].map((m) => [m, m.getBoundingClientRect()]);
    for (const [m, r] of marks) {
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.width > box.width + 0.5) {
        problems.push('outside its lane: ' + m.className + ' ' + m.title.slice(0, 60));
      }
    }
    const glyphs = marks.filter(([m]) => m.classList.contains('glyph'));
    for (let i = 0; i < glyphs.length; i++) {
      for (let j = i + 1; j < glyphs.length; j++) {
        const a = glyphs[i][1], b = glyphs[j][1];
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5) {
          problems.push('on one another: ' + glyphs[i][0].textContent + ' and ' + glyphs[j][0].textContent);
        }
      }
    }
  }
  return problems;
}"""


def _many_fragments(path: Path, fragments: int = 5_000) -> Path:
    """An envelope whose write_file call streams its content in ``fragments`` pieces and which the
    application then ran with {} (SD102), written the way empty_input_bug.jsonl is."""
    content = "".join(f"line {n}\\n" for n in range(fragments - 2))
    pieces = ['{"path": "big.txt", "content": "', *(f"line {n}\\n" for n in range(fragments - 2)), '"}']
    assert "".join(pieces) == '{"path": "big.txt", "content": "' + content + '"}'

    def event(name: str, data: dict[str, Any]) -> dict[str, Any]:
        return {"sd": "event", "event": name, "data": {"type": name, **data}}

    message = {"id": "msg_big", "type": "message", "role": "assistant", "model": "claude", "content": [],
               "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
    tool = {"type": "tool_use", "id": "toolu_big", "name": "write_file", "input": {}}
    records = [
        {"sd": "header", "version": 1, "provider": "anthropic"},
        {"sd": "request", "body": {"model": "claude", "stream": True, "messages": []}},
        event("message_start", {"message": message}),
        event("content_block_start", {"index": 0, "content_block": tool}),
        *(
            event("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}})
            for piece in pieces
        ),
        event("content_block_stop", {"index": 0}),
        event("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}}),
        event("message_stop", {}),
        {"sd": "execute", "call_id": "toolu_big", "name": "write_file", "input": {}},
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _forty_calls(tmp_path: Path) -> Any:
    """A bad day: 40 calls in one message (benchmarks/captures.py: every 10th call's arguments do not
    parse), every third run with {}, every fourth run twice, judged against every client profile's model
    (the page is under test, not the libraries): SD102, SD105 and SD201 errors among some 90 SD801
    warnings and info, 150 findings or more."""
    path = tmp_path / "forty_calls.sse"
    write_calls(path, 40)
    runs: list[dict[str, Any]] = []
    for n in range(40):
        runs.append(
            {"sd": "execute", "call_id": f"toolu_{n:08d}", "input": {} if n % 3 == 0 else {"path": f"f{n}.txt"}}
        )
        runs += [{"sd": "execute", "call_id": f"toolu_{n:08d}", "input": {}}] if n % 4 == 0 else []
    return replay(
        str(path), Options(timeline=True, clients=("all",), client_mode="model", execution_records=tuple(runs))
    )


def _case(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    if name == "40-calls":
        return _forty_calls(tmp_path)
    if name == "single-stream":
        return replay("fixtures/anthropic/stream_cut_mid_arguments.sse", Options(timeline=True))
    if name == "envelope":
        return replay(ENVELOPE, Options(timeline=True, clients=("all",), client_mode="model"))
    if name == "5000-fragments":
        _many_fragments(tmp_path / "many_fragments.jsonl")
        monkeypatch.chdir(tmp_path)  # the page names the capture as the user did: a relative path
        return replay("many_fragments.jsonl", Options(timeline=True))
    return replay(CONVERSATION, Options(timeline=True, clients=("all",), client_mode="model"))


def _screenshots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("STREAM_DOCTOR_SCREENSHOTS") or tmp_path).absolute()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# Identifier pieces (span.seg: "write_", "file") that the browser broke across lines: none may be.
_BROKEN_IDENTIFIERS = """() => [...document.querySelectorAll('.seg:not(.long)')]
  .filter((seg) => seg.getClientRects().length > 1).map((seg) => seg.closest('.ident').textContent)"""


def _in_view(page: Any, selector: str, height: int) -> bool:
    box = page.locator(selector).first.bounding_box()
    return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height


@pytest.mark.slow  # ten pages laid out by Chromium (most of its 12 s of CPU for the module's pages)
@pytest.mark.parametrize("width", sorted(WIDTHS, reverse=True))
@pytest.mark.parametrize("name", ["single-stream", "envelope", "5000-fragments", "conversation", "40-calls"])
def test_the_first_screen_says_what_went_wrong_and_where_and_the_page_fits_its_window(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, width: int
) -> None:
    screenshots = _screenshots(tmp_path)
    report = _case(name, tmp_path, monkeypatch)
    assert report.counts[Severity.ERROR] >= 1  # every case shows a bug
    if name == "40-calls":
        assert len(report.calls) == 40 and len(report.findings) >= 150
    page_file = tmp_path / f"{name}.html"
    page_file.write_text(html.render(report, RenderOptions()), encoding="utf-8")
    height = WIDTHS[width]
    page, problems = _open(browser, page_file, width, height)
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
        assert page.evaluate(_LAYOUT) == []
        assert page.locator(".seg").count() > 0 and page.evaluate(_BROKEN_IDENTIFIERS) == []
        # the summary by code, errors first, in view at once: every code found has its row
        rows = page.locator("#codes .code-row")
        assert {r.get_attribute("data-code") for r in rows.all()} == set(report.code_counts)
        assert rows.first.get_attribute("data-severity") == "error"
        assert _in_view(page, "#codes", height)
        # the worst call opened, its reassembled (or raw) input beside what ran, in view at once
        worst = page.locator(".detail.shown")
        assert worst.count() == 1 and "The worst call" in worst.locator("h3").inner_text()
        assert _in_view(page, ".detail.shown h3", height)
        for selector in (".detail.shown pre.input", ".detail.shown pre.ran-input"):
            if page.locator(selector).count():  # side by side, each begun on the first screen (a long one runs on)
                box = page.locator(selector).first.bounding_box()
                assert box is not None and box["y"] + 40 <= height, selector
        number = int(worst.get_attribute("data-call") or 0)
        assert report.verdicts[number - 1].tone == "error"
        page.screenshot(path=str(screenshots / f"{name}-{width}.png"))  # what a user sees first
        if width == max(WIDTHS):
            page.locator("#timelines").screenshot(path=str(screenshots / f"{name}-timeline.png"))
    finally:
        page.close()
    assert problems == []


def test_a_call_run_wrongly_shows_what_ran_beside_the_stream_and_each_client(browser: Any, tmp_path: Path) -> None:
    report = replay(ENVELOPE, Options(timeline=True, clients=("all",), client_mode="model"))
    page_file = tmp_path / "envelope.html"
    page_file.write_text(html.render(report, RenderOptions()), encoding="utf-8")
    page, problems = _open(browser, page_file)
    try:
        row = page.locator('tr.call-row[data-call="1"]')
        status = row.locator("td.status")
        assert status.inner_text().startswith("ran wrongly (SD102)")
        assert "tone-error" in (status.get_attribute("class") or "").split()
        assert row.locator("td.ran").inner_text() == "{}"
        assert page.locator(".mark.executed.wrong").count() == 1  # the run drawn as wrong on the timeline
        row.click()
        detail = page.locator("#call-1")
        assert json.loads(detail.locator("pre.input").inner_text()) == report.calls[0].arguments
        assert json.loads(detail.locator("pre.ran-input").inner_text()) == {}  # beside the reassembled input
        fold = detail.locator("details.clients-fold")
        assert fold.locator("summary").inner_text().endswith(": 2 differ, 8 agree")  # folded: ten would fill the screen
        fold.locator("summary").click()
        clients = detail.locator("table.clients tbody tr")
        assert clients.count() == 10
        assert detail.locator("tr.differs pre.client-input").count() == 2  # the two naive profiles hand over {}
        for differing in detail.locator("tr.differs pre.client-input").all():
            assert json.loads(differing.inner_text()) == {}
        # the two profiles that match the bug are drawn, not hidden under the eight that agree
        differs = page.locator(".call-lane .mark.client-differs")
        assert differs.count() == 1 and differs.first.inner_text() == "◆×2"
        assert differs.first.is_visible()
        detail.screenshot(path=str(_screenshots(tmp_path) / "envelope-call-detail.png"))
    finally:
        page.close()
    assert problems == []


def test_a_call_run_as_streamed_stays_complete() -> None:
    report = replay(EXECUTED, Options(timeline=True))
    assert report.stream.executions and not any(f.code.startswith("SD1") for f in report.findings)
    page = html.render(report, RenderOptions())
    assert page.count('<td class="status tone-ok">complete</td>') == len(report.calls)
    assert "ran wrongly" not in page and 'class="mark glyph executed wrong' not in page
    assert page.count('<div class="same">') == len(report.stream.executions)


@pytest.mark.parametrize(("executed", "same"), [("1", False), ("true", True), ("1.0", None)])
def test_a_run_with_1_for_true_is_another_input(executed: str, same: bool | None, tmp_path: Path) -> None:
    # The page says what SD103 says: 1 for a streamed true is another input (Python's == says True == 1);
    # 1.0 for a streamed 1 is the same JSON number (None: the stream carried 1).
    streamed = "1" if same is None else "true"
    data = Path("fixtures/anthropic/executed_input_differs.jsonl").read_text(encoding="utf-8")
    data = data.replace('"partial_json":"sius\\"}"', f'"partial_json":"sius\\", \\"force\\": {streamed}}}"')
    data = data.replace(
        '"input":{"location":"Denver, CO","unit":"fahrenheit"}',
        f'"input":{{"location":"Denver, CO","unit":"celsius","force":{executed}}}',
    )
    assert data.count("force") == 2
    path = tmp_path / "ran.jsonl"
    path.write_text(data, encoding="utf-8")
    report = replay(path, Options(timeline=True))
    page = html.render(report, RenderOptions())
    ran_the_same = same is not False
    assert page.count('<div class="same">') == (1 if ran_the_same else 0)
    assert any(f.code == "SD103" for f in report.findings) is not ran_the_same


# -- without a browser: order, legend, counts ------------------------------------------------------

_CHOSEN = sorted(
    {
        *(f"fixtures/{n}" for n in ("anthropic/one_call.sse", "anthropic/stream_cut_mid_arguments.sse")),
        *(
            f"fixtures/{n}"
            for n in ("openai/parallel_calls.sse", "gemini/one_call.sse", "bedrock/converse_one_call.jsonl")
        ),
        ENVELOPE,
        EXECUTED,
        "fixtures/anthropic/executed_twice.jsonl",
        "fixtures/conversations/envelope_two_turns.jsonl",
        "fixtures/conversations/positional_ids_reused.yaml",
        "fixtures/conversations/bedrock_two_turns.har",
        "fixtures/conversations/anthropic_result_unknown_id.yaml",
        CONVERSATION,
    }
)
_SEVERITY = {"error": 2, "warning": 1, "info": 0}


@pytest.mark.parametrize("path", _CHOSEN)
def test_findings_come_most_severe_first_and_the_legend_names_every_mark(path: str) -> None:
    report = replay(path, Options(timeline=True, clients=("all",), client_mode="model"))
    page = html.render(report, RenderOptions())
    shown = [_SEVERITY[s] for s in re.findall(r'<div class="finding (error|warning|info)"', page)]
    assert shown == sorted(shown, reverse=True) and len(shown) == len(report.findings)
    legend = set(re.findall(r'<span class="item" data-kind="([^"]+)"', page))
    drawn = set()
    for classes in re.findall(r'<span class="mark ([^"]+)"', page):
        kind = [c for c in classes.split() if c not in ("bar", "glyph") and not c.startswith("at-")]
        drawn.add(" ".join(kind))
    assert drawn and drawn <= legend, drawn - legend


_TERMINAL_TURN = re.compile(r"^Turn (\d+)  ·  .*?(?:(\d[\d,]*) events?|no streamed response)", re.MULTILINE)
_TERMINAL_TOTALS = re.compile(r"^(\d+) errors?, (\d+) warnings?, (\d+) info in (\d+) tool calls?", re.MULTILINE)


@pytest.mark.parametrize("path", _CHOSEN)
def test_the_page_counts_what_the_terminal_report_counts(path: str) -> None:
    report = replay(path, Options(timeline=True))
    text = terminal.render(report, RenderOptions(width=300))
    page = html.render(report, RenderOptions())
    events = [int(n) for n in re.findall(r'<section class="timeline" data-turn="\d+" data-events="(\d+)"', page)]
    if report.conversation:
        said = [int(n.replace(",", "")) if n else 0 for _, n in _TERMINAL_TURN.findall(text)]
    else:
        said = [int(re.search(r"  ·  ([\d,]+) events?  ·  ", text).group(1).replace(",", ""))]  # type: ignore[union-attr]
        assert f"· {said[0]:,} event" in page.replace("</span> · ", " · ").replace('<span class="fact">', "")
    assert events and events == said
    errors, warnings, infos, calls = map(int, _TERMINAL_TOTALS.search(text).groups())  # type: ignore[union-attr]
    counts = re.search(r'<span id="counts">.*?(\d+) errors?</span>, (\d+) warnings?, (\d+) info</span>', page)
    assert counts is not None and tuple(map(int, counts.groups())) == (errors, warnings, infos)
    assert re.search(r'<span id="call-count">(\d+) tool calls?</span>', page).group(1) == str(calls)  # type: ignore[union-attr]
    assert page.count('<tr class="call-row"') == calls


# -- a bad day: the filter, the page without script, one status per call, the axis ----------------


def _visible_findings(page: Any) -> int:
    return int(
        page.evaluate("[...document.querySelectorAll('#findings .finding')].filter((f) => f.checkVisibility()).length")
    )


def test_the_filter_narrows_the_findings_by_code_severity_and_call(browser: Any, tmp_path: Path) -> None:
    report = _forty_calls(tmp_path)
    page_file = tmp_path / "forty.html"
    page_file.write_text(html.render(report, RenderOptions()), encoding="utf-8")
    page, problems = _open(browser, page_file, 1400, 900)
    try:
        form = page.locator("#filter")
        assert form.is_visible()
        per_group: dict[tuple[str, str], int] = {}
        for f in report.findings:
            per_group[f.code, f.severity.label] = per_group.get((f.code, f.severity.label), 0) + 1
        assert _visible_findings(page) == sum(min(n, html.FIRST_FINDINGS) for n in per_group.values())  # rest folded
        form.locator('select[name="code"]').select_option("SD102")
        assert _visible_findings(page) == report.code_counts["SD102"]  # the folded ones unfolded too
        assert page.locator("#findings .group:visible").count() == 1
        form.locator('select[name="severity"]').select_option("info")
        assert _visible_findings(page) == 0 and "0 of" in page.locator("#filter-count").inner_text()
        form.locator('select[name="code"]').select_option("")
        assert _visible_findings(page) == report.counts[Severity.INFO]
        form.locator('select[name="severity"]').select_option("")
        worst = int(page.locator(".detail.shown").get_attribute("data-call") or 0)
        form.locator('select[name="call"]').select_option(str(worst))
        about = sum(1 for number in report.places.call if number == worst)
        assert about >= 3 and _visible_findings(page) == about
        form.locator('select[name="call"]').select_option("")
        page.locator('#codes .code-row[data-code="SD201"]').click()  # a summary row filters to its code
        assert _visible_findings(page) == report.code_counts["SD201"]
        assert form.locator('select[name="code"]').input_value() == "SD201"
    finally:
        page.close()
    assert problems == []


def test_without_script_the_page_shows_the_summary_the_worst_call_and_each_code_s_first_findings(
    browser: Any, tmp_path: Path
) -> None:
    report = _forty_calls(tmp_path)
    page_file = tmp_path / "forty.html"
    page_file.write_text(html.render(report, RenderOptions()), encoding="utf-8")
    context = browser.new_context(java_script_enabled=False, viewport={"width": 800, "height": 900})
    page = context.new_page()
    try:
        page.goto(page_file.as_uri())
        assert page.locator("#codes").is_visible()
        assert not page.locator("#filter").is_visible()  # no control that would do nothing
        shown = page.locator(".detail.shown")
        assert shown.count() == 1 and shown.is_visible()
        groups = page.locator("#findings .group")
        for group in groups.all():
            assert group.locator(".finding").first.is_visible()
        assert page.locator("#findings details.more").count() >= 1
        assert not page.locator("#findings details.more .finding").first.is_visible()  # folded, one click away
        other = next(n for n in range(1, 41) if n != int(shown.get_attribute("data-call") or 0))
        page.locator(f'tr.call-row[data-call="{other}"] a').click()  # a call's link opens it (:target)
        assert page.locator(f"#call-{other}").is_visible()
    finally:
        context.close()


_STATUS_CELL = re.compile(r'<td class="status tone-(ok|warning|error)">([^<]*)')


@pytest.mark.parametrize("path", _CHOSEN)
def test_every_format_gives_each_call_the_same_status(path: str) -> None:
    report = replay(path, Options(timeline=True))
    page = html.render(report, RenderOptions())
    text = terminal.render(report, RenderOptions(width=300))
    calls = json.loads(json_report.render(report, RenderOptions()))["calls"]
    said = [(v.tone, v.status) for v in report.verdicts]
    assert _STATUS_CELL.findall(page) == said
    assert [(c["verdict"]["tone"], c["verdict"]["status"]) for c in calls] == said
    table = [line for line in text.splitlines() if re.match(r"^\s*\d+\s", line) and ("  " + line.split("  ")[-1])]
    for (_, status), line in zip(said, table, strict=False):
        assert line.rstrip().endswith(status), (line, status)
    for verdict in report.verdicts:  # green only with nothing found about the call or its turn
        if verdict.tone == "ok":
            assert verdict.status == "complete" and not verdict.codes and not verdict.turn_errors


def test_a_call_sent_back_with_empty_input_is_no_green_complete_in_any_format() -> None:
    report = replay(CONVERSATION, Options(timeline=True))
    assert report.codes == ("SD608",) and report.verdicts[0].stream == "complete"
    page = html.render(report, RenderOptions())
    assert _STATUS_CELL.findall(page) == [("error", "error (SD608)")]
    text = terminal.render(report, RenderOptions(width=200, color_system="standard"))
    assert "\x1b[1;31merror (SD608)" in text and "\x1b[32mcomplete" not in text
    call = json.loads(json_report.render(report, RenderOptions()))["calls"][0]
    assert call["status"] == "complete"  # the stream's word, as the schema says; the verdict beside it
    assert call["verdict"] == {"status": "error (SD608)", "tone": "error", "codes": ["SD608"], "turn_errors": []}


def test_a_call_with_warnings_only_keeps_its_word_but_not_the_green() -> None:
    report = replay("fixtures/conversations/openai_echo_input_differs.har", Options())
    assert [(v.tone, v.status, v.codes) for v in report.verdicts] == [("warning", "complete", ("SD609",))]
    assert _STATUS_CELL.findall(html.render(report, RenderOptions())) == [("warning", "complete")]


_AXIS = re.compile(r'<span class="dim axis">· x: (?:records|events) (\d+)–(\d+)(?: \(([^)]*)\))?</span>')


@pytest.mark.parametrize("path", [ENVELOPE, CONVERSATION, "fixtures/conversations/envelope_two_turns.jsonl"])
def test_the_timeline_axis_counts_what_it_draws(path: str) -> None:
    report = replay(path, Options(timeline=True))
    page = html.render(report, RenderOptions())
    events = [int(n) for n in re.findall(r'<section class="timeline" data-turn="\d+" data-events="(\d+)"', page)]
    axes = _AXIS.findall(page)
    assert len(axes) == len(events) == len(report.turns)
    for (first, last, parts), streamed in zip(axes, events, strict=True):
        counts = {word: int(n) for n, word in re.findall(r"(\d+) (event|request|execute record)s?", parts)}
        assert sum(counts.values()) == int(last) - int(first) + 1  # every cell drawn is counted
        # the turn's header counts what the terminal's does: a conversation turn's streamed events, a
        # single capture's frames (its records among them); the axis names both
        assert streamed == (counts["event"] if report.conversation else sum(counts.values()))
        assert counts.get("request", 0) >= 1  # these captures record their requests
