"""The library API as a Python user calls it: ``from stream_doctor import replay, Report``."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import stream_doctor
from stream_doctor import Report, RunError, Severity, replay
from stream_doctor.cli import app
from tests.conftest import ROOT

CLEAN = "fixtures/anthropic/one_call.sse"
EMPTY_INPUT = "fixtures/anthropic/empty_input_bug.jsonl"
CUT = "fixtures/openai/stream_cut_mid_arguments.sse"


def _sse_payloads(path: str) -> list[object]:
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: {")]


def test_the_public_names_are_exactly_all() -> None:
    assert sorted(stream_doctor.__all__) == [
        "Finding",
        "Location",
        "MinimizeError",
        "Minimized",
        "Report",
        "RunError",
        "Severity",
        "__version__",
        "minimize",
        "render",
        "replay",
    ]
    for name in stream_doctor.__all__:
        assert getattr(stream_doctor, name) is not None
    with pytest.raises(AttributeError):
        stream_doctor.engine_replay  # type: ignore[attr-defined]  # noqa: B018
    assert (ROOT / "stream_doctor" / "py.typed").is_file()


def test_importing_the_package_loads_nothing_else() -> None:
    code = "import sys, stream_doctor; print(sorted(m for m in sys.modules if m.startswith('stream_doctor')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "['stream_doctor']"


def test_a_path_gives_a_typed_report_whose_dict_is_the_cli_json() -> None:
    report = replay(CUT)
    assert isinstance(report, Report)
    assert report.failed and report.codes and all(isinstance(f.severity, Severity) for f in report.findings)
    cli = CliRunner().invoke(app, ["replay", CUT, "--format", "json"])
    assert json.loads(cli.stdout) == report.to_dict()
    assert report.to_json() == cli.stdout


def test_render_writes_what_the_cli_writes_for_each_format() -> None:
    report = replay(CUT)
    for fmt in ("json", "jsonl", "terminal"):
        cli = CliRunner().invoke(app, ["replay", CUT, "--format", fmt, "--width", "100", "--no-color"])
        assert stream_doctor.render(report, fmt) == cli.stdout, fmt
    with pytest.raises(ValueError, match="unknown format 'sarif'"):
        stream_doctor.render(report, "sarif")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda p: Path(p), id="pathlike"),
        pytest.param(lambda p: (ROOT / p).read_bytes(), id="bytes"),
        pytest.param(lambda p: io.StringIO((ROOT / p).read_text(encoding="utf-8")), id="text-stream"),
        pytest.param(lambda p: open(ROOT / p, "rb"), id="binary-stream"),  # noqa: SIM115
    ],
)
def test_every_kind_of_source_replays_alike(make) -> None:  # type: ignore[no-untyped-def]
    expected = replay(CUT)
    report = replay(make(CUT))
    assert report.codes == expected.codes
    assert [f.location.line for f in report.findings] == [f.location.line for f in expected.findings]
    assert [c.raw_arguments for c in report.calls] == [c.raw_arguments for c in expected.calls]


def test_bytes_carry_the_name_they_are_given() -> None:
    data = (ROOT / CUT).read_bytes()
    assert replay(data).to_dict()["capture"]["path"] == "<memory>"
    assert str(replay(data, name="cut.sse").findings[0].location).startswith("cut.sse:")


def test_decoded_events_replay_like_the_capture() -> None:
    events = _sse_payloads(CLEAN)
    report = replay(events)
    assert report.codes == ()
    assert report.calls[0].arguments == {"location": "Lisbon, Portugal", "unit": "celsius"}
    assert report.calls[0].name == replay(CLEAN).calls[0].name


def test_sdk_event_objects_are_replayed_from_their_dicts() -> None:
    class SdkEvent:  # the Anthropic and OpenAI SDKs' models offer to_dict()
        def __init__(self, payload: object) -> None:
            self.payload = payload

        def to_dict(self) -> object:
            return self.payload

    report = replay([SdkEvent(p) for p in _sse_payloads(CLEAN)])
    assert report.codes == () and report.calls[0].name == "get_weather"
    with pytest.raises(TypeError, match="cannot replay an event of type object"):
        replay([object()])


def test_executions_show_the_empty_input_bug() -> None:
    call = replay(CLEAN).calls[0]
    ran_placeholder = [{"call_id": call.call_id, "name": call.name, "input": {}}]
    report = replay(CLEAN, executions=ran_placeholder)
    assert report.codes == ("SD102",)
    # the execution is named as the caller gave it, the call's places are the capture's own lines
    assert str(report.findings[0].location) == "executions[0]"
    assert [str(r.location) for r in report.findings[0].related] == [f"{CLEAN}:19 (event 7)", f"{CLEAN}:37 (event 13)"]
    named = replay((ROOT / CLEAN).read_bytes(), name="weather.sse", executions=ran_placeholder)
    assert [str(r.location) for r in named.findings[0].related] == [
        "weather.sse:19 (event 7)",
        "weather.sse:37 (event 13)",
    ]
    ran_right = [{"call_id": call.call_id, "name": call.name, "input": call.arguments}]
    assert replay(CLEAN, executions=ran_right).codes == ()
    assert replay(_sse_payloads(CLEAN), executions=ran_placeholder).codes == ("SD102",)
    with pytest.raises(ValueError, match='"input"'):
        replay(CLEAN, executions=[{"call_id": call.call_id}])
    with pytest.raises(ValueError, match='"call_id" and/or "name"'):
        replay(CLEAN, executions=[{"input": {}}])
    with pytest.raises(ValueError, match='"name" must be a string'):
        replay(CLEAN, executions=[{"name": 7, "input": {}}])


#: Captures and what their application ran: an empty input (SD102), an input that differs (SD103),
#: an unknown id (SD104), a call run twice (SD105), a server tool run by the client (SD106), a call
#: cut mid-arguments run anyway (SD101), and an envelope whose own execute records stay as they are.
GIVEN = {
    "fixtures/anthropic/one_call.sse": [{"call_id": "toolu_01f3H9Mn3GSMpLjVNa749dnK", "input": {}}],
    "fixtures/anthropic/parallel_calls.sse": [
        {"name": "get_weather", "input": {"location": "Tokyo"}},
        {"call_id": "toolu_nope", "name": "get_weather", "input": {}},
        {"call_id": "toolu_01rUxqCsyH1oCEmGnpEf7AxN", "input": {"timezone": "Asia/Tokyo"}},
        {"call_id": "toolu_01rUxqCsyH1oCEmGnpEf7AxN", "input": {"timezone": "Asia/Tokyo"}, "t": 3.5},
    ],
    "fixtures/anthropic/server_tool_use.sse": [{"name": "web_search", "input": {"query": "python"}}],
    "fixtures/openai/stream_cut_mid_arguments.sse": [{"name": "write_file", "input": {"path": "a.txt"}}],
    "fixtures/anthropic/executed_input_differs.jsonl": [{"name": "get_weather", "input": {}}],
}


@pytest.mark.parametrize("capture", sorted(GIVEN))
def test_executions_given_to_the_library_are_placed_as_the_cli_places_them(capture: str, tmp_path: Path) -> None:
    """The library and ``replay --executions`` place executions alike: every location of a call is the
    capture's own line and event; an execution's own location names where it was given (the list's
    index for the library, the file's line for the CLI)."""
    records = GIVEN[capture]
    ran = tmp_path / "ran.jsonl"
    ran.write_text("".join(json.dumps(record) + "\n" for record in records))
    result = CliRunner().invoke(app, ["replay", capture, "--executions", str(ran), "--format", "json", "--isolated"])
    assert result.exit_code in (0, 1), result.output
    by_cli = json.loads(result.output)

    def given_in_list(location: dict[str, Any]) -> dict[str, Any]:
        if location["path"] != str(ran):
            return location
        return {**location, "path": f"executions[{location['line'] - 1}]", "line": None}

    for finding in by_cli["findings"]:
        finding["location"] = given_in_list(finding["location"])
    for execution in by_cli["executions"]:
        if execution.get("given", "").startswith(f"{ran}:"):
            execution["given"] = f"executions[{int(execution['given'].rpartition(':')[2]) - 1}]"
    by_api = replay(capture, executions=records).to_dict()
    assert by_cli["findings"], "each case shows at least one execution finding"
    assert by_api["findings"] == by_cli["findings"]
    assert by_api["executions"] == by_cli["executions"]
    assert {f["location"]["path"] for f in by_api["findings"]} <= {
        capture,
        *(f"executions[{i}]" for i in range(len(records))),
    }


def test_selection_and_fail_on() -> None:
    assert replay(EMPTY_INPUT, select="SD1").codes == ("SD102",)
    assert "SD102" not in replay(EMPTY_INPUT, ignore=["SD1"]).codes
    assert not replay(EMPTY_INPUT, select="SD1", fail_on="error").to_dict()["summary"]["fail_on"] == "warning"
    assert replay("fixtures/anthropic/pause_turn.sse", fail_on=Severity.INFO).failed
    assert replay("fixtures/anthropic/pause_turn.sse", fail_on="Info").failed  # any case, as --fail-on


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"provider": "antropic"}, "unknown provider 'antropic'; did you mean 'anthropic'?"),
        ({"container": "sse2"}, "unknown container 'sse2'; did you mean 'sse'?"),
        ({"select": "SD999"}, "no rule code is or starts with 'SD999'"),
        ({"ignore": "SD10x"}, "did you mean 'SD10"),
        ({"fail_on": "fatal"}, "unknown severity 'fatal'"),
        # the command line's sentence (config/selection.check_severity), not one of Severity's own
        ({"fail_on": "warn"}, "unknown severity 'warn'; did you mean 'warning'? (choose from info, warning, error)"),
    ],
)
def test_bad_options_raise_value_error(kwargs, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=re.escape(message)):
        replay(CLEAN, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "argv"),
    [
        ({"clients": "anthropic-pythn"}, ["--client", "anthropic-pythn"]),
        ({"clients": ["openai-python,langchian"]}, ["--client", "openai-python,langchian"]),
        ({"client_mode": "ran"}, ["--client-mode", "ran"]),
    ],
)
def test_an_unknown_client_or_mode_is_refused_in_the_command_lines_words(kwargs, argv) -> None:  # type: ignore[no-untyped-def]
    # one check (config/selection.check_clients, check_client_mode) behind both: the API's ValueError is
    # the command line's error line without the option's name
    with pytest.raises(ValueError) as refused:
        replay(CLEAN, **kwargs)
    result = CliRunner().invoke(app, ["replay", CLEAN, *argv])
    assert result.exit_code == 2
    assert result.output.rstrip("\n").endswith(str(refused.value)), (result.output, str(refused.value))


def test_client_names_and_modes_are_read_in_any_case() -> None:
    # the near miss of the test above: names the command line takes, in another case, commas and all
    quiet = replay(CLEAN, clients="Anthropic-Python", client_mode="MODEL")
    assert quiet.codes == () and list(quiet.to_dict()["calls"][0]["extras"]["clients"]) == ["anthropic-python"]
    every = replay(CLEAN, clients=["all"], client_mode="Model").to_dict()["calls"][0]["extras"]["clients"]
    assert {"anthropic-python", "anthropic-typescript", "langchain", "naive-parse-each-fragment"} <= set(every)


def test_a_capture_that_cannot_be_replayed_raises_run_error() -> None:
    with pytest.raises(RunError, match="no such file"):
        replay("fixtures/does-not-exist.sse")
    with pytest.raises(RunError, match="empty"):
        replay(b"")


def test_the_examples_in_docs_api_md_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 4
    for number, block in enumerate(blocks[1:], 2):  # the first is the import line
        exec(compile(block, f"docs/api.md (example {number})", "exec"), {"__name__": "docs_api"})
    assert "executions[0]\n<memory>:7 (event 7)\n" in capsys.readouterr().out
