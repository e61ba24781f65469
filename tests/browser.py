"""Debian's Chromium driven by Playwright, for the tests that need a real browser (the HTML report,
the SSE reader against ``EventSource``). ``.ci/run`` installs both; without them a test skips with
what to install, except under ``CI=true``, where a missing browser is a broken build, not a skip."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from typing import Any, Iterator, NoReturn

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
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


def unavailable(reason: str, why: str) -> NoReturn:
    message = f"{reason}: {why} (apt-get install chromium; pip install playwright)"
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@contextmanager
def chromium(why: str) -> Iterator[Any]:
    """A launched Playwright browser; ``why`` says what the test needs it for, in a skip message."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed", why)
    if not os.access(CHROMIUM, os.X_OK):
        unavailable(f"no chromium at {CHROMIUM}", why)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=60_000)
        try:
            yield launched
        finally:
            launched.close()
