"""Which Chromium the browser tests launch (tests/browser.py): named by ``$CHROMIUM``, found on PATH,
or the one ``python -m playwright install chromium`` downloads (issue 36: only /usr/bin/chromium was
looked for, so a Playwright-installed browser left every browser test skipped)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser import chromium, find_chromium


def _executable(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_chromium_is_found_by_variable_then_path_then_playwrights_folder(tmp_path: Path) -> None:
    playwrights = _executable(tmp_path / "ms-playwright" / "chromium-1" / "chrome-linux", "chrome")
    on_path = _executable(tmp_path / "bin", "chromium-browser")
    named = _executable(tmp_path / "elsewhere", "my-chrome")
    both = {"PATH": str(tmp_path / "bin"), "CHROMIUM": str(named)}
    assert find_chromium(both, str(playwrights)) == (str(named), "")
    assert find_chromium({"PATH": str(tmp_path / "bin")}, str(playwrights)) == (str(on_path), "")
    assert find_chromium({"PATH": str(tmp_path / "empty")}, str(playwrights)) == (str(playwrights), "")


def test_no_chromium_says_where_it_looked(tmp_path: Path) -> None:
    """The near misses: a CHROMIUM that names nothing is not replaced by another browser, and with
    none anywhere the reason lists every place."""
    playwrights = tmp_path / "ms-playwright" / "chromium-1" / "chrome-linux" / "chrome"  # not downloaded
    assert find_chromium({"PATH": "", "CHROMIUM": str(tmp_path / "nope")}, str(playwrights)) == (
        None,
        f"CHROMIUM={tmp_path / 'nope'} is not an executable",
    )
    assert find_chromium({"PATH": str(tmp_path)}, str(playwrights)) == (
        None,
        f"no Chromium: CHROMIUM is not set, no chromium, chromium-browser, google-chrome on PATH, not at {playwrights}",
    )


def test_a_browser_where_playwright_installs_it_is_launched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real parts: with no Chromium on PATH, the browser in Playwright's folder (here the system's,
    linked where ``playwright install chromium`` would put it) runs the tests."""
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    system, _ = find_chromium(os.environ, None)
    if system is None:
        pytest.skip("no Chromium on PATH to link into Playwright's folder")
    binary = Path("/usr/lib/chromium/chromium")  # Debian's /usr/bin/chromium is a script that runs it
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "ms-playwright"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no chromium there
    monkeypatch.delenv("CHROMIUM", raising=False)
    with sync_playwright() as playwright:
        where = Path(playwright.chromium.executable_path)
    assert where.is_relative_to(tmp_path)
    where.parent.mkdir(parents=True)
    where.symlink_to(binary if binary.is_file() else system)
    assert find_chromium(os.environ, str(where)) == (str(where), "")
    with chromium("checking that Playwright's folder is looked in") as launched:
        page = launched.new_page()
        assert page.evaluate("1 + 1") == 2
