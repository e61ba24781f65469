"""The report model: one call numbering and selection for every format, totals, extras, the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from stream_doctor.engine.pipeline import replay
from stream_doctor.reporters import RenderOptions, json_report, terminal
from stream_doctor.values.options import Options
from stream_doctor.values.report import CallExtra, UnknownCall
from tests.conftest import ROOT

PARALLEL = "fixtures/anthropic/parallel_calls.sse"
REPORT_SCHEMA = json.loads((ROOT / "stream_doctor/schemas/report-v1.schema.json").read_text())


def test_a_call_number_selects_the_same_call_in_json_and_terminal() -> None:
    report = replay(PARALLEL, Options())
    second = report.calls[1]
    selected = report.select("2")
    data = selected.to_dict()
    assert [c["id"] for c in data["calls"]] == [second.call_id]  # was [] before the report model
    assert len(data["calls"][0]["fragment_list"]) == second.fragment_count
    text = terminal.render(selected, RenderOptions(width=120))
    assert f"Call 2: {second.label}" in text
    by_id = report.select(str(second.call_id)).to_dict()
    assert by_id["calls"] == data["calls"]


def test_an_unknown_call_is_an_error_that_lists_the_calls() -> None:
    report = replay(PARALLEL, Options())
    with pytest.raises(UnknownCall) as raised:
        report.select("9")
    listing = str(raised.value)
    assert all(f"{n} ({call.call_id}" in listing for n, call in enumerate(report.calls, 1))


def test_numbers_count_across_the_turns_of_a_conversation() -> None:
    report = replay("fixtures/conversations/anthropic_duplicate_result.yaml", Options())
    assert report.conversation and len(report.calls) >= 1
    last = len(report.calls)
    data = report.select(str(last)).to_dict()
    assert [c["id"] for c in data["calls"]] == [report.calls[-1].call_id]
    assert data["calls"][0]["turn"] == report.call_turns[-1]


def test_extras_reach_the_json_report_without_touching_a_reporter() -> None:
    # any stage's key (the schema describes the "clients" extra's own shape: tests/clients/test_client_runs.py)
    report = replay(PARALLEL, Options()).with_extra(1, CallExtra("a-stage", {"naive": "ran with {}"}, ("naive: {}",)))
    data = json.loads(json_report.render(report, RenderOptions()))
    jsonschema.validate(data, REPORT_SCHEMA)
    assert data["calls"][0]["extras"] == {"a-stage": {"naive": "ran with {}"}}
    assert "extras" not in data["calls"][1]


def test_reporters_never_import_the_engine() -> None:
    sources = sorted((ROOT / "stream_doctor/reporters").glob("*.py"))
    assert sources
    for path in sources:
        text = Path(path).read_text()
        assert "stream_doctor.engine.pipeline" not in text and "stream_doctor.check.run" not in text, path.name


def test_text_reports_cap_their_rows_and_count_the_rest() -> None:
    report = replay(PARALLEL, Options())
    assert len(report.calls) == 2
    capped = terminal.render(report, RenderOptions(width=120, max_rows=1))
    assert "Tool calls (2)" in capped and "… 1 more call not shown" in capped
    assert report.calls[1].call_id not in capped.split("Findings")[0]
    everything = terminal.render(report, RenderOptions(width=120, max_rows=0))
    assert "more call" not in everything and str(report.calls[1].call_id) in everything
