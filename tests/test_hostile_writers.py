"""Files the CLI writes, and the lines it says about them, against hostile names and existing files.

Issue 31 (hostile input, round three) and issue 36 point 4: each attack runs the CLI in a child
process under the address-space limit of ``tests/test_adversarial.py`` (``run_cli``), checking the
exit code, the one-line message, peak memory and what is on disk after; each beside a near miss
that must still work.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_adversarial import PEAK_BOUND_KB, Ran, run_cli

#: each attack run by the CLI in a subprocess under an address-space limit
pytestmark = [pytest.mark.slow]

EMPTY_INPUT = ROOT / "fixtures/anthropic/empty_input_bug.jsonl"
HAND_WRITTEN = "# hand-written\ndef test_weather():\n    pass\n"


def _fixture(cwd: Path, output: str, *more: str) -> Ran:
    ran = run_cli("fixture", str(EMPTY_INPUT), "-k", "SD102", "-o", output, "--max-seconds", "30", *more, cwd=cwd)
    assert ran.peak_kb < PEAK_BOUND_KB
    return ran


# ------------------------------------------------------------------------------------ code injection


@pytest.mark.parametrize(
    "name",
    ['a""";__import__(\'os\').system(\'touch PWNED\');"""b\\N.jsonl', "weather.jsonl"],
    ids=["injection", "near-miss"],  # the near miss: a plain name, whose module runs its test just the same
)
def test_a_fixture_named_to_inject_code_writes_a_module_that_runs_only_its_test(tmp_path: Path, name: str) -> None:
    (tmp_path / "tests").mkdir()
    ran = _fixture(tmp_path, f"tests/{name}")
    assert ran.code == 0, ran.err
    (test,) = (tmp_path / "tests").glob("test_*.py")
    _fails_on_its_capture(test)
    assert not list(tmp_path.rglob("PWNED"))


def _fails_on_its_capture(test: Path) -> None:
    """The generated test run by pytest: it found its capture, and fails naming the finding it shows."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=test.parent,
        capture_output=True,
        encoding="utf-8",
        errors="replace",  # pytest quotes the file name as it is
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 1 and "1 failed" in run.stdout and "SD102" in run.stdout, run.stdout


def test_a_fixture_whose_name_is_not_utf8_is_written_and_found(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.jsonl")
    ran = _fixture(tmp_path, name)
    assert ran.code == 0, ran.err
    assert "caf\\xe9.jsonl" in ran.err  # the summary shows the byte escaped; before: an internal error
    source = (tmp_path / "test_caf.py").read_text(encoding="utf-8")
    assert "Path(__file__).with_name('caf\\udce9.jsonl')" in source
    _fails_on_its_capture(tmp_path / "test_caf.py")


# ------------------------------------------------------------------------------------ replaced files


def test_fixture_never_replaces_a_test_module_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    hand = tmp_path / "tests/test_weather.py"
    hand.write_text(HAND_WRITTEN)
    ran = _fixture(tmp_path, "tests/weather.jsonl")
    assert ran.code == 2 and ran.error_line == (
        "stream-doctor: error: tests/test_weather.py: exists, and is not a test `stream-doctor fixture` wrote "
        "(or was edited since); refusing to replace it (--force does)"
    )
    assert hand.read_text() == HAND_WRITTEN and not (tmp_path / "tests/weather.jsonl").exists()
    assert _fixture(tmp_path, "tests/weather.jsonl", "--force").code == 0
    assert "test_weather_is_clean" in hand.read_text()


def test_a_fifo_where_the_test_goes_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "test_weather.py")
    ran = _fixture(tmp_path, "weather.jsonl")
    assert ran.code == 2 and "test_weather.py: exists, and is not a test `stream-doctor fixture` wrote" in ran.err
    assert sorted(os.listdir(tmp_path)) == ["test_weather.py"]


def test_running_the_same_fixture_command_again_updates_its_own_files(tmp_path: Path) -> None:
    first = _fixture(tmp_path, "weather.jsonl")
    assert first.code == 0, first.err
    test = tmp_path / "test_weather.py"
    written = test.read_text()
    (tmp_path / "weather.jsonl").write_bytes(EMPTY_INPUT.read_bytes())  # a new recording saved over it
    again = _fixture(tmp_path, "weather.jsonl")
    assert again.code == 0, again.err
    assert test.read_text() == written
    # edited (the xfail mark its docstring suggests), the module is the user's
    test.write_text(written.replace("def test_", "import pytest\n@pytest.mark.xfail(strict=True)\ndef test_"))
    assert _fixture(tmp_path, "weather.jsonl").code == 2
    assert "xfail" in test.read_text()


def test_two_fixtures_whose_names_give_one_module_do_not_collide(tmp_path: Path) -> None:
    assert _fixture(tmp_path, "a-b.jsonl").code == 0
    ran = _fixture(tmp_path, "A.B.jsonl")
    assert ran.code == 2 and ran.error_line == (
        "stream-doctor: error: test_a_b.py: is the test of a-b.jsonl, whose name gives the same module; "
        "name this fixture differently (--force replaces it)"
    )
    assert not (tmp_path / "A.B.jsonl").exists() and "'a-b.jsonl'" in (tmp_path / "test_a_b.py").read_text()
    assert _fixture(tmp_path, "a_b2.jsonl").code == 0  # the near miss: another name, another module


def test_fixture_never_replaces_a_capture_no_test_of_its_own_names(tmp_path: Path) -> None:
    (tmp_path / "weather.jsonl").write_text("a capture of the user's\n")
    ran = _fixture(tmp_path, "weather.jsonl")
    assert ran.code == 2 and "weather.jsonl: exists, and no test `stream-doctor fixture` wrote beside it" in ran.err
    assert (tmp_path / "weather.jsonl").read_text() == "a capture of the user's\n"
    assert not (tmp_path / "test_weather.py").exists()


@pytest.mark.parametrize("command", ["minimize", "convert"])
def test_minimize_and_convert_replace_an_existing_output_only_with_force(tmp_path: Path, command: str) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("the user's\n")
    args = [command, str(EMPTY_INPUT), "-o", str(out)] + (["-k", "SD102"] if command == "minimize" else [])
    ran = run_cli(*args)
    assert (
        ran.code == 2
        and ran.error_line == f"stream-doctor: error: {out}: exists; refusing to replace it (--force does)"
    )
    assert out.read_text() == "the user's\n"
    ran = run_cli(*args, "--force")
    assert ran.code == 0 and ran.peak_kb < PEAK_BOUND_KB, ran.err
    assert out.read_text() != "the user's\n"


@pytest.mark.parametrize("command", ["minimize", "fixture", "convert"])
def test_an_output_named_for_another_format_is_refused_with_the_right_name(tmp_path: Path, command: str) -> None:
    # the minimized empty_input_bug.jsonl is an envelope, as convert always writes
    args = [command, str(EMPTY_INPUT)] + (["-k", "SD102"] if command != "convert" else [])
    ran = run_cli(*args, "-o", "x.sse", cwd=tmp_path)
    assert ran.code == 2 and ran.error_line == (
        "stream-doctor: error: x.sse: the output is an envelope (JSON Lines); name it x.jsonl, as its extension must say"
    )
    assert os.listdir(tmp_path) == []
    ran = run_cli(*args, "-o", "x.jsonl", cwd=tmp_path)
    assert ran.code == 0, ran.err
    assert (tmp_path / "x.jsonl").read_bytes().startswith(b"{")


# ------------------------------------------------------------------------------------------- sidecars


@pytest.mark.parametrize("hostile", ["\x01", "\r", "\x7f", '\n[[expect]]\ncode = "SD102"\n#', ""], ids=repr)
def test_update_expectations_writes_a_sidecar_that_reads_back_whatever_the_name(tmp_path: Path, hostile: str) -> None:
    capture = tmp_path / f"x{hostile}.jsonl"  # "" is the near miss: a plain name
    shutil.copyfile(EMPTY_INPUT, capture)
    ran = run_cli("check", ".", "--update-expectations", cwd=tmp_path)
    assert ran.code == 0 and ran.peak_kb < PEAK_BOUND_KB, ran.err
    sidecar = tomllib.loads(Path(f"{capture}.expect.toml").read_text(encoding="utf-8"))
    assert [entry["code"] for entry in sidecar["expect"]] == ["SD102"]
    assert run_cli("check", ".", cwd=tmp_path).code == 0  # and check reads it as it was written


# ------------------------------------------------------------------------------------- summary lines

#: What a terminal or a CI log acts on: a control character (tab aside), a line break, a command.
_ACTING = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x80-\x9f\u2028\u2029]|^[ \t]*(::|##\[)")


@pytest.mark.parametrize(
    "name",
    [
        "t\x1b]0;retitled\x07.jsonl",
        "t\x1b]8;;https:evil\x07link\x1b]8;;\x07.jsonl",
        "t\n::warning::injected.jsonl",
        "::error::first.jsonl",
        "t\u2028##[error]x.jsonl",
    ],
    ids=repr,
)
@pytest.mark.parametrize("command", ["minimize", "fixture"])
def test_summary_lines_quote_a_hostile_name_escaped_on_one_line(tmp_path: Path, name: str, command: str) -> None:
    shutil.copyfile(EMPTY_INPUT, tmp_path / name)
    ran = run_cli(command, name, "-k", "SD102", "-o", "small.jsonl", "--max-seconds", "30", cwd=tmp_path)
    assert ran.code == 0 and ran.peak_kb < PEAK_BOUND_KB, ran.err
    lines = ran.err.splitlines()
    assert len(lines) == (2 if command == "fixture" else 1), ran.err
    assert not any(_ACTING.search(line) for line in lines), ran.err


def test_a_plain_name_is_quoted_as_it_is(tmp_path: Path) -> None:
    shutil.copyfile(EMPTY_INPUT, tmp_path / "plain name é.jsonl")
    ran = run_cli("minimize", "plain name é.jsonl", "-k", "SD102", "-o", "small.jsonl", cwd=tmp_path)
    assert ran.code == 0 and ran.error_line.startswith("plain name é.jsonl -> small.jsonl: 4,238 -> ")
