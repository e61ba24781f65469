"""``serve --matrix --format html -o FILE``: the matrix as a page of the HTML report's (its shell, CSS and
escaping), opened in Debian's Chromium through Playwright: rows grouped meaning-keeping / faults / quirks, a
failing row and its failing call marked, a passing one not, and a hostile tool name, id or verdict shown as
text, never markup or script. The rows are built directly (the runs themselves are test_matrix.py's)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stream_doctor.serve import matrix_table
from stream_doctor.serve.matrix import CallRun, Row
from tests.browser import chromium
from tests.test_html_report import RAW_CONTROL, _open

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = '<img src=x onerror="window.pwned=1"></script><script>window.pwned=2</script>\x1b[2J'


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium("the matrix's HTML page is tested in a real browser") as launched:
        yield launched


def _rows() -> list[Row]:
    ran = CallRun(1, "toolu_01" + HOSTILE, "write_file" + HOSTILE, "right-input", None)
    early = CallRun(1, "toolu_01A", "get_weather", "too-early", "ran-unfinished")
    other = CallRun(1, "toolu_01A", "get_weather", "another-input", "SD608")
    return [
        Row("byte-per-read", "meaning", "Every byte in a read of its own.", exit=0, calls=(other,)),
        Row("crlf", "meaning", "CRLF line ends.", exit=0, calls=(ran,), seen=(HOSTILE,)),
        Row("cut-before-completion", "fault", "A cut.", exit=1, calls=(early, ran), endings=("turn 1: " + HOSTILE,)),
        Row("cut-after-event", "fault", "Another cut.", exit=1, calls=(CallRun(1, "toolu_01A", "x", "crashed", None),)),
        Row("data-ping", "quirk", "A relay's ping.", skipped="data-ping does not apply to anthropic"),
    ]


def test_the_matrix_page_groups_the_rows_marks_what_fails_and_escapes_capture_text(
    browser: Any, tmp_path: Path
) -> None:
    page_file = tmp_path / "matrix.html"
    page_file.write_text(matrix_table.html(_rows()), encoding="utf-8")
    source = page_file.read_text(encoding="utf-8")
    assert RAW_CONTROL.search(source) is None and "<script>window.pwned" not in source
    assert 'http-equiv="Content-Security-Policy"' in source  # the report's shell
    page, problems = _open(browser, page_file)
    try:
        assert page.evaluate("typeof window.pwned") == "undefined" and page.locator("img").count() == 0
        assert page.locator("#verdict").inner_text() == "failed"
        sections = page.locator("section.kind")
        assert [sections.nth(i).get_attribute("id") for i in range(sections.count())] == [
            "kind-meaning",
            "kind-fault",
            "kind-quirk",
        ]
        failing = page.locator("tr.failing")
        assert [failing.nth(i).get_attribute("data-variant") for i in range(failing.count())] == [
            "byte-per-read",
            "cut-before-completion",
        ]
        # the near misses: a meaning-keeping row run right, a fault's crash, a skipped quirk are not marked
        for name in ("crlf", "cut-after-event", "data-ping"):
            row = page.locator(f'tr[data-variant="{name}"]')
            assert "failing" not in (row.get_attribute("class") or "") and row.locator("li.wrong").count() == 0
        cut = page.locator('tr[data-variant="cut-before-completion"]')
        assert cut.locator("li.wrong").inner_text().endswith("ran it before it was complete (ran-unfinished)")
        assert "<script>window.pwned=2</script>" in page.locator('tr[data-variant="crlf"]').inner_text()
        assert "\\x1b[2J" in cut.inner_text()  # control characters shown as escapes, as in the terminal
        background = cut.locator("td").first.evaluate("cell => getComputedStyle(cell).backgroundColor")
        assert background == "rgb(255, 245, 245)"
    finally:
        page.close()
    assert problems == []


@pytest.mark.slow  # serve --matrix as the CLI with its command a second Python child (4 s of CPU); the page is tested above
def test_format_html_writes_the_page_to_the_output_file(tmp_path: Path) -> None:
    page_file = tmp_path / "matrix.html"
    done = subprocess.run(
        [sys.executable, "-m", "stream_doctor", "serve", "fixtures/conversations/anthropic_echo_empty_input.yaml"]
        + ["--matrix", "--vary", "one-read", "--format", "html", "-o", str(page_file), "--out", str(tmp_path / "runs")]
        + ["--", sys.executable, "-c", "raise SystemExit(3)"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    source = page_file.read_text(encoding="utf-8")
    assert '<tr class="row failing" data-variant="one-read">' in source
    assert "write_file toolu_016VrNJIy6Bc1b7mC4BgQKrx: crashed without sending it back" in source
