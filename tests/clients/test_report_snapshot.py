"""How client predictions read in the terminal and JSON reports (reviewed like code: read the diff)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from stream_doctor.api import replay
from stream_doctor.reporters import RenderOptions, json_report, terminal

#: --client all: every profile's installed library run in a child process
pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path("fixtures")  # relative, so the report's paths do not depend on the checkout
CLIENTS = ["anthropic-python", "vercel-ai", "naive-start-placeholder"]


def test_terminal_report_shows_each_clients_prediction_under_the_call(
    snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch, node_harness: object
) -> None:
    """vercel-ai's line is the installed npm package's run: it needs the harness's packages (skipped
    without them, as every test that runs Node is; a clone without `npm ci` reads the model instead)."""
    monkeypatch.chdir(ROOT)
    report = replay(FIXTURES / "anthropic/abandoned_at_max_tokens.sse", clients=CLIENTS)
    assert terminal.render(report, RenderOptions(width=120)) == snapshot


def test_json_report_carries_the_predictions_as_call_extras(
    snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    report = replay(FIXTURES / "openai/parallel_calls_interleaved.sse", clients=["openai-python", "langchain"])
    data = json.loads(json_report.render(report, RenderOptions()))
    assert [call["extras"]["clients"] for call in data["calls"]] == snapshot
