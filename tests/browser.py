"""A Chromium driven by Playwright, for the tests that need a real browser (the HTML report, the SSE
reader against ``EventSource``). The browser is the first of: ``$CHROMIUM``; ``chromium``,
``chromium-browser``, ``google-chrome`` on PATH (``.ci/run`` installs Debian's); the one
``python -m playwright install chromium`` downloads. Without one a test skips saying where it looked
and how to get one, except under ``CI=true``, where a missing browser is a broken build, not a skip."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, NoReturn

import pytest

#: Names a Chromium has on PATH: Debian's and Ubuntu's packages, Google's.
ON_PATH = ("chromium", "chromium-browser", "google-chrome")
INSTALL = "python -m playwright install chromium, apt-get install chromium, or CHROMIUM=/path/to/chrome"
#: headless, and nothing that reaches past loopback
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


def unavailable(reason: str, why: str, install: str) -> NoReturn:
    message = f"{reason}: {why} ({install})"
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def find_chromium(environ: Mapping[str, str], playwrights: str | None) -> tuple[str | None, str]:
    """The Chromium to launch, else None and where it was looked for. ``playwrights``: where
    ``playwright install chromium`` puts its browser (Playwright's ``chromium.executable_path``)."""
    named = environ.get("CHROMIUM")
    if named:  # asked for by name: that one or none
        found = shutil.which(named)
        return (found, "") if found else (None, f"CHROMIUM={named} is not an executable")
    path = environ.get("PATH", os.defpath)
    for name in ON_PATH:
        found = shutil.which(name, path=path)
        if found:
            return found, ""
    if playwrights is not None and os.access(playwrights, os.X_OK):
        return playwrights, ""
    looked = f"no Chromium: CHROMIUM is not set, no {', '.join(ON_PATH)} on PATH, not at {playwrights}"
    return None, looked


@contextmanager
def chromium(why: str) -> Iterator[Any]:
    """A launched Playwright browser; ``why`` says what the test needs it for, in a skip message."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed", why, "pip install -e '.[test]'")
    with sync_playwright() as playwright:
        executable, looked = find_chromium(os.environ, playwright.chromium.executable_path)
        if executable is None:
            unavailable(looked, why, INSTALL)
        launched = playwright.chromium.launch(executable_path=executable, args=ARGS, timeout=60_000)
        try:
            yield launched
        finally:
            launched.close()
