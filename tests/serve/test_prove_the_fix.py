"""docs/prove-the-fix.md stays true: its application, run against the served capture with the real
SDK, prints what the page shows, and the verdicts are the page's (the envelope's name aside)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: the loopback server in front of the real SDKs; the page's application run in a child process per walk (5 s of CPU)
pytestmark = [pytest.mark.external, pytest.mark.slow]

pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs/prove-the-fix.md").read_text(encoding="utf-8")
CAPTURE = "fixtures/conversations/anthropic_echo_empty_input.yaml"


def without_envelope(text: str) -> str:
    return re.sub(r"\S*\d{4}-\d{8}T\d{6}Z-v1-messages\.jsonl", "ENVELOPE", text)


@pytest.mark.parametrize(("flags", "worst"), [((), "error"), (("--fixed",), None)])
def test_the_pages_walk(stream_doctor_server: Any, flags: tuple[str, ...], worst: str | None) -> None:
    server = stream_doctor_server(CAPTURE)
    environment = {
        **os.environ,
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "stream-doctor-serve",
        "PYTHONPATH": str(ROOT),
    }
    ran = subprocess.run(
        [sys.executable, "-W", "ignore", "docs/examples/todo_agent.py", *flags],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    command = "$ python docs/examples/todo_agent.py" + "".join(f" {flag}" for flag in flags)
    assert f"{command}\n{ran.stdout}```" in PAGE
    assert server.worst() == worst
    page = without_envelope(PAGE)
    for line in without_envelope(server.report().replace(str(ROOT) + "/", "")).splitlines():
        assert line in page
