"""``stream-doctor serve`` as a user runs it: the lines to export, the application's run, SIGTERM, the
verdicts and the exit code; a capture that cannot be served and a missing extra, one line and exit 2."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import first_in_the_inner_loop
from tests.serve import apps

#: `stream-doctor serve` in a subprocess, on loopback
pytestmark = [pytest.mark.external]

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parents[2]
EMPTY_INPUT = str(ROOT / "fixtures/anthropic/empty_input_bug.jsonl")
TIMEOUT = 60


def start(*arguments: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "stream_doctor", "serve", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=ROOT,
    )


def exports(process: subprocess.Popen[str]) -> dict[str, str]:
    assert process.stdout is not None
    lines = [process.stdout.readline(), process.stdout.readline()]
    assert all(line.startswith("export ") for line in lines), lines
    return dict(line.removeprefix("export ").strip().split("=", 1) for line in lines)


@pytest.mark.parametrize(("loop", "code"), [(apps.anthropic_buggy, 1), (apps.anthropic_correct, 0)])
def test_serve_then_sigterm_prints_the_verdicts_and_exits_by_fail_on(
    tmp_path: Path, loop: apps.Loop, code: int
) -> None:
    from stream_doctor.serve.load import load_script

    process = start(EMPTY_INPUT, "--port", "0", "--out", str(tmp_path))
    try:
        lines = exports(process)
        assert lines["ANTHROPIC_API_KEY"] == "stream-doctor-serve"
        client = anthropic.Anthropic(
            base_url=lines["ANTHROPIC_BASE_URL"], api_key=lines["ANTHROPIC_API_KEY"], max_retries=0
        )
        request = load_script(EMPTY_INPUT).turns[0].request
        assert request is not None
        loop(client, request)
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == code, err
    assert "stream-doctor serve: 1 conversation with the application" in out
    assert ("error SD608: write_file (toolu_01gcx3DpVvg6wzPCEBtz4hRD)" in out) == (code == 1)
    assert "Traceback" not in err and "serving 1 capture (anthropic) at http://127.0.0.1:" in err
    assert len(list(tmp_path.glob("*.jsonl"))) == 1  # the application's conversation, as an envelope


def test_a_capture_that_cannot_be_served_is_one_line_and_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sse"
    empty.write_bytes(b"")
    process = start(str(empty), "--port", "0")
    out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 2 and out == ""
    assert err.count("\n") == 1 and "the capture is empty" in err


def test_without_the_record_extra_it_says_how_to_install_it() -> None:
    code = "import sys; sys.modules['aiohttp'] = None; from stream_doctor.cli import main; sys.argv = ['stream-doctor', 'serve', sys.argv[1]]; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, EMPTY_INPUT],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=TIMEOUT,
    )
    assert done.returncode == 2
    assert (
        done.stderr.count("\n") == 1
        and "needs the record extra (aiohttp)" in done.stderr
        and "stream-doctor[record]" in done.stderr
    )


def test_a_host_other_than_loopback_is_said_on_start(tmp_path: Path) -> None:
    process = start(EMPTY_INPUT, "--port", "0", "--host", "0.0.0.0", "--out", str(tmp_path))
    try:
        assert process.stderr is not None
        assert "listening on 0.0.0.0, not loopback" in process.stderr.readline()
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0


BAD_VALUES = [
    (("--fail-on", "bad"), "--fail-on: unknown severity 'bad' (choose from info, warning, error)"),
    (("--max-request", "12zz"), "--max-request 12zz: expected a size such as 65536, 512KiB or 64MiB"),
]


# --fail-on's case in the inner loop, --max-request's under slow (one child process each)
@pytest.mark.parametrize(
    ("option", "said"), first_in_the_inner_loop(BAD_VALUES, ids=[name for (name, _), _ in BAD_VALUES], several=True)
)
def test_a_bad_option_value_is_one_line_and_exit_2(option: tuple[str, str], said: str) -> None:
    process = start(EMPTY_INPUT, "--port", "0", *option)
    out, err = process.communicate(timeout=TIMEOUT)
    assert (process.returncode, out, err) == (2, "", f"stream-doctor: error: {said}\n")
