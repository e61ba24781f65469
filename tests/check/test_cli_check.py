"""``stream-doctor check`` as a user runs it, through typer's runner: every option, exit codes, reports."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from stream_doctor.cli import app
from tests.check.conftest import TREE
from tests.conftest import ROOT

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["check", *args], env={"GITHUB_ACTIONS": "", **(env or {})})


def error_line(result) -> str:  # type: ignore[no-untyped-def]
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("stream-doctor: error: "), lines[0]
    return lines[0]


# --- the tree as a whole -------------------------------------------------------------------------


def test_the_tree_fails_for_exactly_its_three_failures(in_tree: Path) -> None:
    result = run(".", "--width", "120")
    assert result.exit_code == 1, result.output
    out = result.output
    assert "10 captures: 7 passed, 3 failed (1 unreadable, 1 stale expectation)" in out
    assert "5 files skipped (not captures)" in out
    assert "Failures (3)" in out
    for shown in ("SD000 capture-unreadable", "SD301 abandoned-call", "SD900 stale-expectation"):
        assert shown in out
    assert "bugs/fixed_bug.sse.expect.toml:4" in out  # a stale expectation points at its entry
    assert "Expected (2)" in out and "configuration: stream-doctor.toml" in out
    assert "scratch/" not in out  # excluded by the configuration
    assert "Traceback" not in out


def test_all_as_expected_exits_0(in_tree: Path) -> None:
    result = run("clean", "bugs/empty_input_bug.jsonl", "bugs/premature_execution_partial_buffer.jsonl")
    assert result.exit_code == 0, result.output
    assert "0 failed" in result.output and "Failures" not in result.output


def test_an_unreadable_capture_fails_that_capture_not_the_run(in_tree: Path) -> None:
    result = run("broken", "clean/one_call.sse", "--width", "120")
    assert result.exit_code == 1
    assert "SD000" in result.output and "gzip data is cut off" in result.output
    assert "clean/one_call.sse" in result.output and "1 passed, 1 failed (1 unreadable)" in result.output


# --- paths ---------------------------------------------------------------------------------------


def test_globs_files_and_folders(in_tree: Path) -> None:
    data = json.loads(run("bugs/*.sse", "clean", "sdk-log/one_call_events.jsonl", "--report", "json").stdout)
    assert [c["path"] for c in data["captures"]] == [
        "bugs/abandoned_at_max_tokens.sse",
        "bugs/fixed_bug.sse",
        "clean/one_call.sse",
        "clean/parallel_calls.sse",
        "clean/pause_turn.sse",
        "sdk-log/one_call_events.jsonl",
    ]


def test_recursive_glob(in_tree: Path) -> None:
    data = json.loads(run("**/*.jsonl", "--report", "json").stdout)
    assert [c["path"] for c in data["captures"]] == [
        "bugs/empty_input_bug.jsonl",
        "bugs/premature_execution_partial_buffer.jsonl",
        "sdk-log/one_call_events.jsonl",
    ]


def test_a_file_named_explicitly_is_checked_even_when_excluded_or_not_a_capture(in_tree: Path) -> None:
    excluded = run("scratch/work_in_progress.sse")
    assert excluded.exit_code == 1 and "SD301" in excluded.output
    not_a_capture = run("notes.txt", "--width", "120")
    assert not_a_capture.exit_code == 1 and "SD000" in not_a_capture.output
    assert "could not recognise the capture format" in not_a_capture.output


def test_a_sidecar_named_on_the_command_line_stands_for_its_capture(in_tree: Path) -> None:
    data = json.loads(run("bugs/empty_input_bug.jsonl.expect.toml", "--report", "json").stdout)
    assert [c["path"] for c in data["captures"]] == ["bugs/empty_input_bug.jsonl"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "no paths to check"),
        (("nowhere/",), "nowhere/: no such file or folder"),
        (("nothing-*.sse",), "nothing-*.sse: the pattern matches no file"),
        (("notes.txt.d",), "no such file or folder"),
    ],
)
def test_could_not_run_exits_2_with_one_line(in_tree: Path, args: tuple[str, ...], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in error_line(result)


def test_a_folder_without_captures_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "README.md").write_text("# not a capture\n")
    monkeypatch.chdir(tmp_path)
    result = run(".")
    assert result.exit_code == 2
    assert "no captures found in . (1 files skipped: not captures)" in error_line(result)


# --- choosing what counts ------------------------------------------------------------------------


def test_select_and_ignore(in_tree: Path) -> None:
    assert run("bugs/abandoned_at_max_tokens.sse").exit_code == 1
    assert run("bugs/abandoned_at_max_tokens.sse", "--ignore", "SD3").exit_code == 0
    assert run("bugs/abandoned_at_max_tokens.sse", "--select", "SD1,SD2").exit_code == 0
    assert run("bugs/abandoned_at_max_tokens.sse", "--select", "SD1", "--select", "SD301").exit_code == 1


def test_an_expectation_for_a_rule_not_selected_is_not_stale(in_tree: Path) -> None:
    assert run("bugs/fixed_bug.sse").exit_code == 1  # expects SD201, which is gone
    assert run("bugs/fixed_bug.sse", "--select", "SD1").exit_code == 0
    assert run("bugs/fixed_bug.sse", "--ignore", "SD201").exit_code == 0


def test_ignoring_sd0_does_not_hide_an_unreadable_capture(in_tree: Path) -> None:
    assert run("broken", "--ignore", "SD0").exit_code == 1


def test_fail_on(in_tree: Path) -> None:
    assert run("clean/pause_turn.sse").exit_code == 0  # an info finding, below the tree's "warning"
    assert run("clean/pause_turn.sse", "--fail-on", "info").exit_code == 1
    assert run("bugs/abandoned_at_max_tokens.sse", "--fail-on", "error").exit_code == 1
    assert run("clean", "--fail-on", "fatal").exit_code == 2


# --- configuration -------------------------------------------------------------------------------


def test_per_path_ignores(in_tree: Path) -> None:
    assert run("relay").exit_code == 0  # SD001 is ignored for relay/** and fail-on is warning
    isolated = run("relay", "--isolated", "--fail-on", "warning")
    assert isolated.exit_code == 1 and "SD001" in isolated.output


def test_per_path_provider(in_tree: Path) -> None:
    data = json.loads(run("sdk-log", "clean/one_call.sse", "--report", "json").stdout)
    forced = {c["path"]: c["report"]["capture"]["provider_forced"] for c in data["captures"]}
    assert forced == {"clean/one_call.sse": False, "sdk-log/one_call_events.jsonl": True}


def test_expectations_from_the_configuration(in_tree: Path) -> None:
    assert run("bugs/premature_execution_partial_buffer.jsonl").exit_code == 0
    assert run("bugs/premature_execution_partial_buffer.jsonl", "--isolated").exit_code == 1


def test_the_configuration_is_found_by_walking_up(in_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(TREE / "relay")
    result = run(".", "--width", "120")
    assert result.exit_code == 0, result.output
    assert "configuration: ../stream-doctor.toml" in result.output


def test_pyproject_table_and_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(ROOT / "fixtures/anthropic/pause_turn.sse", tmp_path / "pause_turn.sse")  # one info finding
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.stream-doctor]\nfail-on = "info"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert run("../pause_turn.sse").exit_code == 1  # the table, found one folder up
    assert run("../pause_turn.sse", "--fail-on", "error").exit_code == 0  # the command line wins
    (tmp_path / "stream-doctor.toml").write_text('fail-on = "error"\n')
    assert run("../pause_turn.sse").exit_code == 0  # stream-doctor.toml comes first in a folder
    (tmp_path / "sub" / "pyproject.toml").write_text('[project]\nname = "y"\n')  # no table: passed over
    assert run("../pause_turn.sse").exit_code == 0


def test_explicit_config_and_isolated(in_tree: Path, tmp_path: Path) -> None:
    config = tmp_path / "strict.toml"
    config.write_text('fail-on = "info"\n')
    assert run("clean/pause_turn.sse", "--config", str(config)).exit_code == 1
    assert run("clean/pause_turn.sse", "--isolated", "--fail-on", "info").exit_code == 1
    missing = run("clean", "--config", str(tmp_path / "none.toml"))
    assert missing.exit_code == 2 and "no such configuration file" in error_line(missing)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('fial-on = "error"\n', "strict.toml:1: unknown key 'fial-on' in the top level; did you mean 'fail-on'?"),
        ('fail-on = "fatal"\n', "strict.toml:1: 'fail-on' unknown severity 'fatal' (choose from info, warning, error)"),
        ('fail-on = "warn"\n', "strict.toml:1: 'fail-on' unknown severity 'warn'; did you mean 'warning'?"),
        ('select = "SD1"\n', "strict.toml:1: 'select' must be a list of rule codes or prefixes"),
        ('ignore = ["E501"]\n', "strict.toml:1: 'ignore' holds 'E501', which is not a rule code or prefix"),
        (
            '\nignore = ["SD999"]\n',
            "strict.toml:2: 'ignore' no rule code is or starts with 'SD999'; did you mean 'SD900'?",
        ),
        ("jobs = -1\n", "strict.toml:1: 'jobs' must be a whole number"),
        ('[per-path-ignores]\n"x/**" = "SD1"\n', "strict.toml:2: 'x/**' must be a list of rule codes"),
        ('[per-file-ignores]\n\n"x/**" = ["SD99"]\n', "strict.toml:3: 'x/**' no rule code is or starts with 'SD99'"),
        ('[per-path-provider]\n"x/**" = "nonesuch"\n', "strict.toml:2: 'x/**' unknown provider 'nonesuch'"),
        ('[expect]\n"a.sse" = [{ code = "SD102", cal-id = "x" }]\n', "unknown key 'cal-id' in expect.'a.sse'"),
        ('[expect]\n"a.sse" = ["102"]\n', "entry needs 'code', a rule code such as \"SD102\""),
        ("fail-on = \n", "strict.toml: not valid TOML"),
        ('provider = "antropic"\n', "strict.toml:1: 'provider' unknown provider 'antropic'; did you mean 'anthropic'?"),
        ('container = "ssse"\n', "strict.toml:1: 'container' unknown container 'ssse'; did you mean 'sse'?"),
        ("respect-gitignore = 1\n", "strict.toml:1: 'respect-gitignore' must be true or false (got 1)"),
    ],
)
def test_bad_configuration_exits_2_naming_file_and_key(in_tree: Path, tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "strict.toml"
    config.write_text(text)
    result = run("clean", "--config", str(config))
    assert result.exit_code == 2, result.output
    assert message in error_line(result)


def test_unknown_key_in_pyproject_names_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(ROOT / "fixtures/anthropic/one_call.sse", tmp_path / "one_call.sse")
    (tmp_path / "pyproject.toml").write_text('[tool.stream-doctor]\nselects = ["SD1"]\n')
    monkeypatch.chdir(tmp_path)
    result = run(".")
    assert result.exit_code == 2
    assert error_line(result) == (
        "stream-doctor: error: pyproject.toml:2: unknown key 'selects' in [tool.stream-doctor]; did you mean 'select'? "
        "(known keys: select, ignore, extend-select, fail-on, provider, container, jobs, max-bytes, max-frames, exclude, "
        "per-path-ignores, per-file-ignores, per-path-provider, respect-gitignore, expect, sessions)"
    )


def test_bad_sidecar_fails_its_capture_only(tree_copy: Path) -> None:
    (tree_copy / "clean/one_call.sse.expect.toml").write_text('[[expect]]\ncode = "SD102"\nseverity = "error"\n')
    result = run("clean", "--report", "json")
    assert result.exit_code == 1, result.output
    captures = {c["path"]: c for c in json.loads(result.stdout)["captures"]}
    assert len(captures) > 1
    bad = captures.pop("clean/one_call.sse")
    assert [(f["code"], f["location"]["path"]) for f in bad["findings"]] == [
        ("SD000", "clean/one_call.sse.expect.toml")
    ]
    assert "unknown key 'severity' in expect" in bad["findings"][0]["message"]
    assert bad["failed"] and not any(c["failed"] for c in captures.values())


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('select = ["SD999"]\n', "SD999"),  # a value
        ("select = [\n", "stream-doctor.toml"),  # not TOML
        ("expect = " + "[" * 10_000, "stream-doctor.toml"),  # nested past the parser
    ],
    ids=["bad-value", "not-toml", "nested"],
)
def test_bad_nested_configuration_fails_the_captures_it_governs_only(tree_copy: Path, text: str, said: str) -> None:
    sub = tree_copy / "clean/sub"
    sub.mkdir()
    shutil.copy(tree_copy / "clean/one_call.sse", sub / "governed.sse")
    (sub / "stream-doctor.toml").write_text(text)
    result = run("clean", "--report", "json")
    assert result.exit_code == 1, result.output
    captures = {c["path"]: c for c in json.loads(result.stdout)["captures"]}
    bad = captures.pop("clean/sub/governed.sse")
    assert [f["code"] for f in bad["findings"]] == ["SD000"]
    assert "the configuration governing it cannot be read" in bad["findings"][0]["message"]
    assert said in bad["findings"][0]["message"]
    assert captures and bad["failed"] and not any(c["failed"] for c in captures.values())
    # the near miss: the run's own configuration (that of the first path named) cannot be set aside
    alone = run("clean/sub")
    assert alone.exit_code == 2 and said in error_line(alone)


@pytest.mark.parametrize(
    "make",
    [
        lambda sidecar: sidecar.symlink_to("/dev/zero"),  # was 7.5 GB read, then a traceback
        lambda sidecar: os.mkfifo(sidecar),  # was a hang
        lambda sidecar: sidecar.write_text("expect = " + "[" * 10_000),  # was a RecursionError traceback
    ],
    ids=["dev-zero", "fifo", "nested"],
)
def test_hostile_sidecar_is_a_finding(tree_copy: Path, make: Callable[[Path], None]) -> None:
    make(tree_copy / "clean/one_call.sse.expect.toml")
    result = run("clean/one_call.sse")
    assert result.exit_code == 1, result.output
    assert "SD000" in result.output and "the expectations cannot be read" in result.output


def test_provider_and_container_options(in_tree: Path) -> None:
    assert run("clean/one_call.sse", "--provider", "anthropic").exit_code == 0
    assert run("clean/one_call.sse", "--container", "sse").exit_code == 0
    wrong = run("clean/one_call.sse", "--container", "json")  # forced wrong: that capture fails
    assert wrong.exit_code == 1 and "SD000" in wrong.output
    assert "unknown provider 'nonesuch'" in error_line(run("clean", "--provider", "nonesuch"))
    assert "unknown container 'nonesuch'" in error_line(run("clean", "--container", "nonesuch"))


# --- expectations --------------------------------------------------------------------------------


def test_update_expectations_makes_the_tree_pass_and_is_idempotent(tree_copy: Path) -> None:
    first = run(".", "--update-expectations", "--width", "160")
    assert first.exit_code == 0, first.output
    assert "3 expectation files updated" in first.output
    written = (tree_copy / "bugs/abandoned_at_max_tokens.sse.expect.toml").read_text()
    assert 'code = "SD301"' in written and 'call-id = "toolu_01jhDCupgNe8oewpxxaRE2nn"' in written
    assert not (tree_copy / "bugs/fixed_bug.sse.expect.toml").exists()  # nothing left to expect
    assert 'code = "SD000"' in (tree_copy / "broken/truncated.sse.gz.expect.toml").read_text()
    untouched = (TREE / "bugs/empty_input_bug.jsonl.expect.toml").read_text()
    assert (tree_copy / "bugs/empty_input_bug.jsonl.expect.toml").read_text() == untouched
    assert run(".").exit_code == 0
    again = run(".", "--update-expectations", "--report", "json")
    assert json.loads(again.stdout)["updated_expectations"] == []


def test_update_keeps_entries_that_still_match(tree_copy: Path) -> None:
    sidecar = tree_copy / "bugs/abandoned_at_max_tokens.sse.expect.toml"
    sidecar.write_text('[[expect]]\ncode = "SD301"\nline = 70\n\n[[expect]]\ncode = "SD102"\n')
    assert run("bugs/abandoned_at_max_tokens.sse").exit_code == 1  # SD102 is stale
    assert run("bugs/abandoned_at_max_tokens.sse", "--update-expectations").exit_code == 0
    text = sidecar.read_text()
    assert 'code = "SD301"\nline = 70\n' in text and "SD102" not in text


def test_update_writes_only_what_reaches_fail_on(tree_copy: Path) -> None:
    assert run("clean/pause_turn.sse", "--update-expectations", "--fail-on", "info").exit_code == 0
    assert 'code = "SD305"' in (tree_copy / "clean/pause_turn.sse.expect.toml").read_text()
    assert run("clean/parallel_calls.sse", "--update-expectations").exit_code == 0
    assert not (tree_copy / "clean/parallel_calls.sse.expect.toml").exists()


# --- reports -------------------------------------------------------------------------------------


def test_several_reports_in_one_run(in_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run(
        ".",
        "--report", f"json:{out}/check.json",
        "--report", f"junit:{out}/junit.xml",
        "--report", f"sarif:{out}/check.sarif",
        "--report", f"markdown:{out}/summary.md",
        "--report", f"github:{out}/annotations.txt",
        "--report", f"terminal:{out}/check.txt",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "Failures (3)" in result.output  # no report on standard output: the terminal one goes there
    assert json.loads((out / "check.json").read_text())["summary"]["failures"] == 3
    assert (out / "junit.xml").read_text().count("<failure ") == 3
    assert len(json.loads((out / "check.sarif").read_text())["runs"][0]["results"]) == 3
    assert (out / "summary.md").read_text().startswith("## stream-doctor check")
    assert len((out / "annotations.txt").read_text().splitlines()) == 3
    assert "Failures (3)" in (out / "check.txt").read_text()


def test_reports_on_standard_output_replace_the_terminal_one(in_tree: Path) -> None:
    result = run("clean", "--report", "json")
    assert json.loads(result.stdout)["failed"] is False


def test_unknown_report_format_exits_2(in_tree: Path) -> None:
    result = run("clean", "--report", "html:out.html")
    assert result.exit_code == 2 and "unknown format 'html'" in error_line(result)


def test_github_annotations_are_automatic_on_github_actions(in_tree: Path) -> None:
    result = run(".", env={"GITHUB_ACTIONS": "true"})
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 3
    assert annotations[1].startswith(
        "::error file=bugs/abandoned_at_max_tokens.sse,line=70,title=SD301 abandoned-call::"
    )
    as_json = run(".", "--report", "json", env={"GITHUB_ACTIONS": "true"})  # never mixed into a machine report
    assert json.loads(as_json.stdout)["summary"]["failures"] == 3
    clean = run("clean", env={"GITHUB_ACTIONS": "true"})
    assert clean.exit_code == 0 and "::" not in clean.stdout


@pytest.mark.slow  # three checks of 120 captures with five reports, two of them in worker processes (2 s of CPU)
def test_machine_reports_are_byte_identical_across_runs_and_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(40):  # enough captures for worker processes to be used
        for source in ("one_call.sse", "empty_input_bug.jsonl", "abandoned_at_max_tokens.sse"):
            target = tmp_path / "captures" / f"{number:02d}" / source
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / "fixtures/anthropic" / source, target)
    monkeypatch.chdir(tmp_path)
    outputs: list[dict[str, bytes]] = []
    for jobs in ("1", "2", "2"):
        folder = tmp_path / f"out-{len(outputs)}"
        result = run(
            "captures", "--jobs", jobs,
            *(arg for fmt in ("json", "junit", "sarif", "markdown", "github") for arg in ("-r", f"{fmt}:{folder}/{fmt}")),
        )  # fmt: skip
        assert result.exit_code == 1
        outputs.append({p.name: p.read_bytes() for p in folder.iterdir()})
    assert outputs[0] == outputs[1] == outputs[2]
    assert json.loads(outputs[0]["json"])["summary"]["captures"] == 120


def test_explain_knows_check_rules() -> None:
    for code in ("SD000", "SD900", "stale-expectation"):
        result = runner.invoke(app, ["explain", code])
        assert result.exit_code == 0 and "How to fix" in result.output


def test_jobs_option_validation(in_tree: Path) -> None:
    assert run("clean", "--jobs", "-1").exit_code == 2
    assert run("clean", "--jobs", "0").exit_code == 0


def test_width_and_colour(in_tree: Path) -> None:
    plain = run("bugs/abandoned_at_max_tokens.sse", "--width", "60", "--no-color")
    assert "\x1b[" not in plain.output
    assert max(len(line) for line in plain.output.splitlines()[3:]) <= 60  # findings wrap at the width
    coloured = run("bugs/abandoned_at_max_tokens.sse", "--color")
    assert "\x1b[" in coloured.output and "SD301" in coloured.output
