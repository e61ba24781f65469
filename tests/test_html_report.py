"""The HTML report in a real headless browser: Debian's Chromium driven by Playwright.

The page is loaded from a file; the test asserts it loads without a console error or any
request beyond the file itself, shows every call and finding, and that clicking a call shows its
reassembled input; it saves a screenshot under pytest's tmp dir. Without chromium or playwright
the test skips with what to install, except under CI=true, where a missing browser fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stream_doctor.cli import app
from stream_doctor.engine import replay
from stream_doctor.install import REPOSITORY
from stream_doctor.options import Options
from stream_doctor.report import CallExtra
from stream_doctor.reporters import RenderOptions, html
from tests import hostile_capture

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EXECUTED = "fixtures/anthropic/parallel_calls_executed.jsonl"
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _unavailable(reason: str) -> None:
    message = (
        f"{reason}: the HTML report is tested in a real browser (apt-get install chromium; pip install playwright)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)  # CI installs both: a missing browser is a broken build, not a skip
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed")
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no chromium at {CHROMIUM}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=60_000)
        try:
            yield launched
        finally:
            launched.close()


def _open(browser: Any, page_file: Path) -> tuple[Any, list[str]]:
    """The page, and every problem seen while loading it: console errors, page errors, requests."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
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
        assert not page.locator(".detail.shown").count()
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
