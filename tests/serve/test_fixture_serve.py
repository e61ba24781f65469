"""``stream-doctor fixture CAPTURE --serve MODULE:FUNCTION``: the regression test it writes serves the capture
to the user's function with the ``stream_doctor_server`` fixture and fails with the finding while the bug is
there. Run with a real pytest on the page's todo agent (docs/examples/todo_agent.py, the real Anthropic SDK):
against its buggy loop the test fails naming SD608, against its fixed twin it passes. The module is built as
a tree like every test ``fixture`` writes, and a file ``fixture`` did not write is never replaced."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: the written test module run against the loopback server
pytestmark = [pytest.mark.external]

pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = "fixtures/conversations/anthropic_echo_empty_input.yaml"
#: the user's own code: the page's todo agent, its buggy loop and its fixed twin, each a function of no arguments
AGENT = f"""
import sys

sys.path.insert(0, {str(ROOT / "docs" / "examples")!r})
import todo_agent


def buggy():
    sys.argv = ["todo_agent.py"]
    todo_agent.main()


def fixed():
    sys.argv = ["todo_agent.py", "--fixed"]
    todo_agent.main()
"""


def _run(*arguments: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "ignore", *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT), str(cwd)))},
        cwd=cwd,
        timeout=300,
    )


def _fixture(folder: Path, target: str) -> subprocess.CompletedProcess[str]:
    output = str(folder / "echo.yaml")
    return _run("-m", "stream_doctor", "fixture", CAPTURE, "--keep", "SD608", "--serve", target, "-o", output)


def test_the_written_test_fails_with_the_finding_on_the_buggy_agent_and_passes_on_the_fixed_one(tmp_path: Path) -> None:
    (tmp_path / "agent_under_test.py").write_text(AGENT, encoding="utf-8")
    written = _fixture(tmp_path, "agent_under_test:buggy")
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "echo.yaml").read_bytes() == (ROOT / CAPTURE).read_bytes()  # served as recorded
    test = tmp_path / "test_echo.py"
    buggy = _run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(test), cwd=tmp_path)
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    assert "error SD608: write_file (toolu_016VrNJIy6Bc1b7mC4BgQKrx) is sent back in turn 2's request" in buggy.stdout

    rewritten = _fixture(tmp_path, "agent_under_test:fixed")  # its own unedited module: replaced
    assert rewritten.returncode == 0, rewritten.stderr
    fixed = _run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(test), cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "1 passed" in fixed.stdout


@pytest.mark.parametrize("target", ["agent", "agent:run()", "agent:'; import os", ":run", "agent:run:x"])
def test_a_target_that_is_not_module_colon_function_is_one_line(target: str, tmp_path: Path) -> None:
    done = _fixture(tmp_path, target)
    assert (done.returncode, done.stdout) == (2, "")
    assert len(done.stderr.strip().splitlines()) == 1 and "MODULE:FUNCTION" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_test_module_it_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "test_echo.py"
    mine.write_text("def test_mine():\n    pass\n", encoding="utf-8")
    done = _fixture(tmp_path, "agent_under_test:buggy")
    assert done.returncode == 2 and "refusing to replace it" in done.stderr
    assert mine.read_text(encoding="utf-8") == "def test_mine():\n    pass\n"
    assert not (tmp_path / "echo.yaml").exists()
