"""The pytest plugin, run the way a user's project runs it (pytester), and its start-up cost."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

#: pytest run in child processes (pytester) on scratch projects
pytestmark = [pytest.mark.slow]

pytest_plugins = ["pytester"]

FIXTURES = ROOT / "fixtures/anthropic"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    captures = pytester.path / "captures"
    captures.mkdir()
    for name in ("one_call.sse", "empty_input_bug.jsonl", "pause_turn.sse"):
        shutil.copy(FIXTURES / name, captures / name)
    return pytester


def test_the_plugin_is_registered_by_its_entry_point() -> None:
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group="pytest11") if e.value == "stream_doctor.pytest_plugin"]
    assert [e.name for e in found] == ["stream_doctor"]


def test_assert_clean_passes_and_fails_with_the_rendered_findings(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_streams="""
        def test_clean(stream_doctor):
            report = stream_doctor.assert_clean("captures/one_call.sse")
            assert report.stream.calls[0].name == "get_weather"

        def test_bug_declared(stream_doctor):
            stream_doctor.assert_clean("captures/empty_input_bug.jsonl", expect=["SD102"])

        def test_bug_not_declared(stream_doctor):
            stream_doctor.assert_clean("captures/empty_input_bug.jsonl")

        def test_expected_but_absent(stream_doctor):
            stream_doctor.assert_clean("captures/one_call.sse", expect=["SD201"])

        def test_below_fail_on_and_options(stream_doctor):
            stream_doctor.assert_clean("captures/pause_turn.sse")
            stream_doctor.assert_clean("captures/pause_turn.sse", fail_on="info", expect=["SD305"])
            stream_doctor.assert_clean("captures/empty_input_bug.jsonl", ignore="SD1")

        def test_unreadable(stream_doctor, tmp_path):
            path = tmp_path / "empty.sse"
            path.write_text("")
            stream_doctor.assert_clean(path)
        """
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*stream-doctor: captures/empty_input_bug.jsonl does not show what was expected*",
            "*SD102 empty-input-execution  captures/empty_input_bug.jsonl:20 (event 19)*",
        ]
    )
    result.stdout.fnmatch_lines(["*expected findings that did not appear:*", "*SD900 stale-expectation*SD201*"])
    result.stdout.fnmatch_lines(["*stream-doctor could not replay *empty.sse: the capture is empty*"])
    assert "Traceback" not in result.stdout.str()


def test_assert_clean_reads_the_sidecar(project: pytest.Pytester) -> None:
    (project.path / "captures/empty_input_bug.jsonl.expect.toml").write_text('[[expect]]\ncode = "SD102"\n')
    project.makepyfile(
        test_sidecar="""
        def test_bug_declared_in_its_sidecar(stream_doctor):
            stream_doctor.assert_clean("captures/empty_input_bug.jsonl")
        """
    )
    project.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_snapshot_a_report_with_syrupy(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_snapshots="""
        def test_report(stream_doctor, snapshot):
            assert stream_doctor.json_report("captures/empty_input_bug.jsonl") == snapshot

        def test_terminal(stream_doctor, snapshot):
            assert stream_doctor.terminal_report("captures/one_call.sse", width=90) == snapshot
        """
    )
    project.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=2)
    stored = (project.path / "__snapshots__/test_snapshots.ambr").read_text()
    assert "'code': 'SD102'" in stored and "get_weather" in stored  # a dict, stored key by key
    project.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)  # the same report again


def test_json_report_is_the_reports_values(project: pytest.Pytester) -> None:
    """Issue 36: ``json_report(path)["findings"]`` had raised "string indices must be integers"."""
    project.makepyfile(
        test_values="""
        import json

        from stream_doctor import replay

        def test_values(stream_doctor):
            report = stream_doctor.json_report("captures/empty_input_bug.jsonl")
            assert "SD102" in [f["code"] for f in report["findings"]]
            assert report == json.loads(replay("captures/empty_input_bug.jsonl").to_json())

        def test_options_apply(stream_doctor):
            assert stream_doctor.json_report("captures/empty_input_bug.jsonl", select="SD3")["findings"] == []
        """
    )
    project.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_unknown_option_is_a_clear_error(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_options="""
        import pytest

        def test_typo(stream_doctor):
            with pytest.raises(TypeError, match="unknown stream-doctor option 'fail_om'"):
                stream_doctor.replay("captures/one_call.sse", fail_om="info")
        """
    )
    project.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "import stream_doctor.pytest_plugin\n"
        "heavy = ('stream_doctor.engine.pipeline', 'stream_doctor.check', 'rich', 'orjson', 'jsonschema', 'typer', 'yaml')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
